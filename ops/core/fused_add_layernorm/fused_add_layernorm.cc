// opforge::FusedAddLayerNorm — a residual add and LayerNormalization in one layer:
//   Y = LayerNormalization(X + R)   over the axes [axis, rank), Scale and B broadcast over them
// X and R have one shape. Made by the add_layernorm_fusion graph pass from Add ->
// LayerNormalization (the statistics outputs unused); the node is named "<add>+<layernorm>". CPU
// reference: the sum in the compute type, statistics and normalization in double, as
// LayerNormalization's.
#include <cmath>

#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"

namespace opforge::ops {

OPFORGE_OP(FusedAddLayerNorm, "opforge::FusedAddLayerNorm")
    .doc("LayerNormalization(X + R) in one layer (built by the add_layernorm_fusion pass).")
    .input("X")
    .input("R", "X's shape")
    .input("Scale")
    .optionalInput("B")
    .output("Y")
    .attr<int64_t>("axis", int64_t{-1})
    .attr<double>("epsilon", 1e-5)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), res = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (res.dtype != x.dtype || res.rank() != x.rank())
        return c.error("input 'R' " + dtypeName(res.dtype) + toString(res.dims) +
                       " must have X's type and shape");
      for (int a = 0; a < x.rank(); ++a)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, res.dim(a), x.dim(a), "input 'R' must have X's shape"));
      if (x.rank() == 0) return c.error("input 'X' must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      std::vector<DimExpr> norm(x.dims.begin() + axis, x.dims.end());
      for (int i = 2; i <= 3; ++i) {
        if (!c.hasInput(i)) continue;
        SymDesc p = c.input(i);
        if (p.dtype != x.dtype) return c.error("Scale and B must have X's type");
        OPFORGE_ASSIGN_OR_RETURN(auto b, broadcastShapes(c, norm, p.dims));
        if (b.size() != norm.size())
          return c.error("Scale / B " + toString(p.dims) + " do not broadcast to " +
                         toString(norm));
      }
      return x.like();
    })
    .combos(comboTypes(kFloats))
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &res = in[1];
      const int r = x.desc.rank();
      const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
      const double eps = k.attr<double>("epsilon");
      const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
      const std::vector<int64_t> norm(x.desc.dims.begin() + axis, x.desc.dims.end());
      auto rowOffsets = [&](const Tensor& p) {
        std::vector<int64_t> off(static_cast<size_t>(n));
        forEachRun(norm, {broadcastStrides(p.desc.dims, norm)},
                   [&](int64_t o, const int64_t* b, int64_t len, const int64_t* st) {
                     for (int64_t i = 0; i < len; ++i) off[o + i] = b[0] + i * st[0];
                   });
        return off;
      };
      const auto soff = rowOffsets(in[2]);
      const bool has_b = hasIn(in, 3);
      const auto boff = has_b ? rowOffsets(in[3]) : std::vector<int64_t>{};
      return visitTypes<kFloats>(x.desc.dtype, "FusedAddLayerNorm", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto *px = ptrOf<N>(x), *pr = ptrOf<N>(res), *ps = ptrOf<N>(in[2]);
        const auto* pb = has_b ? ptrOf<N>(in[3]) : nullptr;
        auto* py = mutPtr<N>(out[0]);
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t rw = 0; rw < rows; ++rw) {
          double mean = 0, var = 0;
          for (int64_t i = 0; i < n; ++i) {
            row[i] = static_cast<double>(
                static_cast<C>(N::load(px[rw * n + i]) + N::load(pr[rw * n + i])));
            mean += row[i];
          }
          mean /= static_cast<double>(n);
          for (int64_t i = 0; i < n; ++i) var += (row[i] - mean) * (row[i] - mean);
          var /= static_cast<double>(n);
          const double inv = 1.0 / std::sqrt(var + eps);
          for (int64_t i = 0; i < n; ++i) {
            double v = (row[i] - mean) * inv * N::load(ps[soff[i]]);
            if (pb) v += N::load(pb[boff[i]]);
            py[rw * n + i] = N::store(static_cast<C>(v));
          }
        }
        return Status::ok();
      });
    });

}  // namespace opforge::ops
