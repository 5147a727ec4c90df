// convert.h — element type conversion shared by Cast and CastLike.
// Float to integer truncates toward zero and saturates at the target's range; NaN becomes 0. FP8
// (E4M3FN, E5M2) converts through double with ONNX's rounding and saturation.
// To BOOL: non-zero (and NaN) is true. Integer to integer is exact and wraps like C++.
#pragma once

#include <algorithm>

#include "util.h"

namespace opforge::ops {

namespace detail {
template <typename NI, typename NO>
void castLoop(const Tensor& x, const Tensor& y) {
  const auto* px = static_cast<const typename NI::S*>(x.data);
  const int64_t n = x.numel();
  constexpr bool kIntToInt = std::is_integral_v<typename NI::C> &&
                             std::is_integral_v<typename NO::C> &&
                             !std::is_same_v<typename NO::C, bool>;
  if constexpr (kIntToInt) {
    auto* py = static_cast<typename NO::S*>(y.data);
    for (int64_t i = 0; i < n; ++i) py[i] = static_cast<typename NO::S>(NI::load(px[i]));
  } else {
    for (int64_t i = 0; i < n; ++i)
      storeFromDouble(y.data, y.desc.dtype, i, static_cast<double>(NI::load(px[i])));
  }
}
}  // namespace detail

// FP8 on either side (a storage type with no Num): element by element through double, FP8 results
// rounded to nearest even and saturated unless `saturate` is false (ONNX Cast's table).
inline Status castTensor(const Tensor& x, const Tensor& y, const char* op, bool saturate = true) {
  if (inTypeSet(x.desc.dtype, kFp8) || inTypeSet(y.desc.dtype, kFp8)) {
    const bool to_fp8 = inTypeSet(y.desc.dtype, kFp8);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = loadAsDouble(x.data, x.desc.dtype, i);
      if (to_fp8)
        static_cast<uint8_t*>(y.data)[i] = fp8FromDouble(v, y.desc.dtype, saturate);
      else
        storeFromDouble(y.data, y.desc.dtype, i, v);
    }
    return Status::ok();
  }
  return visitTypes<kAll>(x.desc.dtype, op, [&](auto ni) -> Status {
    return visitTypes<kAll>(y.desc.dtype, op, [&](auto no) -> Status {
      detail::castLoop<decltype(ni), decltype(no)>(x, y);
      return Status::ok();
    });
  });
}

// Shape values survive a cast between integer types, and to FP32 / FP64 and back (exact for
// integers below 2^24): torch.arange(n, ...) over a float size exports Cast(Shape) -> Range.
inline void castValues(ShapeContext& c, const SymDesc& x, DataType to) {
  const auto exact = [](DataType t) {
    return isIntIndex(t) || t == DataType::kFloat32 || t == DataType::kFloat64;
  };
  if (x.rank() > 1) return;
  auto v = c.value(0);
  if (!v) return;
  if (exact(x.dtype) && exact(to)) {
    c.setValue(0, *v);
    return;
  }
  // Known conditions (a BOOL value is 0 / 1): to and from BOOL where every element is a number,
  // so an If's condition cast from a comparison of sizes stays known.
  const bool consts =
      std::all_of(v->begin(), v->end(), [](const DimExpr& e) { return e.isConst(); });
  if (!consts) return;
  if (x.dtype == DataType::kBool && (exact(to) || to == DataType::kBool)) {
    c.setValue(0, *v);
  } else if (exact(x.dtype) && to == DataType::kBool) {
    std::vector<DimExpr> b;
    for (const DimExpr& e : *v) b.push_back(DimExpr(e.constValue() != 0 ? 1 : 0));
    c.setValue(0, std::move(b));
  }
}

}  // namespace opforge::ops
