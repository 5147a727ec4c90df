// softmax.h — Softmax, LogSoftmax and Hardmax. Opset 13 and later work along one axis (default
// -1); older opsets flatten the input to 2-D at `axis` (default 1) and work on each row. The
// model's opset comes from the importer (`_onnx_opset`); networks made in C++ get the new form.
#pragma once

#include <cmath>

#include "combos.h"
#include "util.h"

namespace opforge::ops {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// (outer, n, inner) of the rows the op normalises.
inline void softmaxGeometry(const AttrMap& a, const std::vector<int64_t>& dims, int64_t* outer,
                            int64_t* n, int64_t* inner) {
  const int r = static_cast<int>(dims.size());
  const bool old = opsetOf(a) < 13;
  const int64_t given = a.has("axis") ? a.get<int64_t>("axis") : (old ? 1 : -1);
  const int axis = r == 0 ? 0 : wrapAxis(given, r);
  if (old) {
    *outer = prodOf(dims, 0, axis);
    *n = prodOf(dims, axis, r);
    *inner = 1;
  } else {
    *outer = prodOf(dims, 0, axis);
    *n = r == 0 ? 1 : dims[axis];
    *inner = prodOf(dims, axis + 1, r);
  }
}

// The CPU reference of the family on rows (outer, n, inner) of x, in double (a NaN makes its row
// NaN; Hardmax takes the first maximum). y may be x: each row is read whole before it is written.
template <SoftmaxKind K>
Status softmaxFamilyReference(const char* name, int64_t outer, int64_t n, int64_t inner,
                              const Tensor& x, const Tensor& y) {
  return visitTypes<kFloats>(x.desc.dtype, name, [&](auto num) -> Status {
    using N = decltype(num);
    using C = typename N::C;
    const auto* px = ptrOf<N>(x);
    auto* py = mutPtr<N>(y);
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        double m = -std::numeric_limits<double>::infinity();
        int64_t arg = 0;
        for (int64_t j = 0; j < n; ++j) {
          row[j] = static_cast<double>(N::load(px[base + j * inner]));
          if (row[j] > m || (j == 0 && std::isnan(row[j]))) {
            m = row[j];
            arg = j;
          }
        }
        if constexpr (K == SoftmaxKind::kHardmax) {
          for (int64_t j = 0; j < n; ++j)
            py[base + j * inner] = N::store(static_cast<C>(j == arg ? 1 : 0));
        } else {
          double sum = 0;
          for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - m);
          for (int64_t j = 0; j < n; ++j) {
            const double v = K == SoftmaxKind::kSoftmax ? std::exp(row[j] - m) / sum
                                                        : row[j] - m - std::log(sum);
            py[base + j * inner] = N::store(static_cast<C>(v));
          }
        }
      }
    return Status::ok();
  });
}

template <SoftmaxKind K>
auto softmaxOp(const char* name) {
  return [=](OpDef& d) {
    d.input("input")
        .output("output")
        .optionalAttr<int64_t>("axis", "default -1 (opset >= 13), 1 before")
        .with(onnxOpsetAttr)
        .combos(comboTypes(kFloats))
        .shape([](ShapeContext& c) -> Result<SymDesc> {
          SymDesc x = c.input(0);
          OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kFloats));
          if (c.attrs().has("axis")) {
            OPFORGE_RETURN_IF_ERROR(
                normAxis(c, c.attr<int64_t>("axis"), std::max(x.rank(), 1)).status());
          }
          return x.like();
        })
        .cpu([name](KernelContext& k, std::span<const Tensor> in,
                    std::span<const Tensor> out) -> Status {
          int64_t outer, n, inner;
          softmaxGeometry(k.attrs(), in[0].desc.dims, &outer, &n, &inner);
          return softmaxFamilyReference<K>(name, outer, n, inner, in[0], out[0]);
        });
  };
}

}  // namespace opforge::ops
