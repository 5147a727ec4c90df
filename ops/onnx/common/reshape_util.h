// reshape_util.h — symbolic size arithmetic for Reshape-like ops: products split into a constant
// and symbolic factors so that common factors cancel ([x.0, 3, 4] -> [x.0, -1] infers 12).
#pragma once

#include <cstring>
#include <limits>

#include "util.h"

namespace opforge::ops {

// Splits a product into its constant k and symbolic factors f; false when k overflows int64.
inline bool productFactors(const DimExpr& e, int64_t& k, std::vector<DimExpr>& f) {
  if (e.isConst()) return !__builtin_mul_overflow(k, e.constValue(), &k);
  if (e.kind() == DimExpr::Kind::kMul)
    return productFactors(e.lhs(), k, f) && productFactors(e.rhs(), k, f);
  f.push_back(e);
  return true;
}

// product(num) / product(den) when it divides symbolically (common factors cancel); nullopt when
// it can not be decided; an error value of -1 is never returned (callers check divisibility).
inline std::optional<DimExpr> divideExact(const std::vector<DimExpr>& num,
                                          const std::vector<DimExpr>& den) {
  int64_t kn = 1, kd = 1;
  std::vector<DimExpr> fn, fd;
  for (const auto& d : num)
    if (!productFactors(d, kn, fn)) return std::nullopt;
  for (const auto& d : den)
    if (!productFactors(d, kd, fd)) return std::nullopt;
  for (const auto& d : fd) {
    bool found = false;
    for (size_t i = 0; i < fn.size() && !found; ++i)
      if (fn[i].sameAs(d)) {
        fn.erase(fn.begin() + static_cast<long>(i));
        found = true;
      }
    if (!found) return std::nullopt;
  }
  if (kd == 0 || (kd == -1 && kn == std::numeric_limits<int64_t>::min()) || kn % kd != 0)
    return std::nullopt;
  DimExpr r = kn / kd;
  for (const auto& d : fn) r = r * d;
  return r;
}

// Copies the input to the output unless the output is written in place.
inline Status copyThrough(std::span<const Tensor> in, std::span<const Tensor> out) {
  if (out[0].bytes() != in[0].bytes())
    return Status::internal("output holds " + std::to_string(out[0].bytes()) + " bytes, input " +
                            std::to_string(in[0].bytes()));
  if (out[0].bytes() && out[0].data != in[0].data)
    std::memmove(out[0].data, in[0].data, out[0].bytes());
  return Status::ok();
}

// Shape values pass through ops that keep the elements (Reshape, Squeeze, Unsqueeze, Flatten):
// to a 1-D or scalar output, or to a small one of static dims (the TorchScript export of F.pad
// reshapes its pads to [-1, 2]); the values are the elements in row-major order.
inline void passValues(ShapeContext& c, const SymDesc& y) {
  auto v = c.value(0);
  if (!v) return;
  if (y.rank() > 1) {
    const DimExpr n = product(y.dims);
    if (!n.isConst() || n.constValue() > 64 || static_cast<int64_t>(v->size()) != n.constValue())
      return;
  }
  c.setValue(0, *v);
}

}  // namespace opforge::ops
