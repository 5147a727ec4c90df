// ONNX RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) *
// scale, with scale broadcast to X[axis:]. Statistics in double.
#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(RMSNormalization, "ai.onnx::RMSNormalization")
    .kind("normalization")
    .doc("Root-mean-square normalization over the trailing axes from `axis`.")
    .combos(comboTypes(kFloats))
    .input("X")
    .input("scale")
    .output("Y")
    .attr<int64_t>("axis", int64_t{-1})
    .attr<double>("epsilon", 1e-5)
    .attr<int64_t>("stash_type", int64_t{1}, "statistics in double regardless")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), s = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (s.dtype != x.dtype)
        return c.error("input 'scale' has type " + dtypeName(s.dtype) + "; X has " +
                       dtypeName(x.dtype));
      if (x.rank() == 0) return c.error("input 'X' must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      std::vector<DimExpr> norm(x.dims.begin() + axis, x.dims.end());
      OPFORGE_ASSIGN_OR_RETURN(auto b, broadcastShapes(c, norm, s.dims));
      if (b.size() != norm.size())
        return c.error("input 'scale' " + toString(s.dims) +
                       " does not broadcast to the normalized shape " + toString(norm));
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int r = x.desc.rank();
      const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
      const double eps = k.attr<double>("epsilon");
      const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
      const std::vector<int64_t> norm(x.desc.dims.begin() + axis, x.desc.dims.end());
      std::vector<int64_t> soff(static_cast<size_t>(n));
      forEachRun(norm, {broadcastStrides(in[1].desc.dims, norm)},
                 [&](int64_t o, const int64_t* b, int64_t len, const int64_t* st) {
                   for (int64_t i = 0; i < len; ++i) soff[o + i] = b[0] + i * st[0];
                 });
      return visitTypes<kFloats>(x.desc.dtype, "RMSNormalization", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        const auto* ps = ptrOf<N>(in[1]);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t row = 0; row < rows; ++row) {
          double ss = 0;
          for (int64_t i = 0; i < n; ++i) {
            const double v = N::load(px[row * n + i]);
            ss += v * v;
          }
          const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
          for (int64_t i = 0; i < n; ++i)
            py[row * n + i] =
                N::store(static_cast<C>(N::load(px[row * n + i]) * inv * N::load(ps[soff[i]])));
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
