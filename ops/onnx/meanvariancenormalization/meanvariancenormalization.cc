// ONNX MeanVarianceNormalization: Y = (X - mean) / (sqrt(var) + 1e-9), mean and the (biased)
// variance over `axes` (default [0, 2, 3]), as the op's ONNX function (which takes the variance as
// E[X^2] - E[X]^2; here two passes in double, the same value without the cancellation).
#include <cmath>

#include "../common/util.h"

namespace opforge::ops {
namespace {
// Per element: its group (the coordinates of the kept axes, flattened) — the reduced axes vary
// within a group.
std::vector<int64_t> groupsOf(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
                              int64_t* count) {
  const int r = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<int64_t> g(static_cast<size_t>(total));
  *count = 1;
  for (int a = 0; a < r; ++a)
    if (!reduced[a]) *count *= dims[a];
  const auto st = stridesOf(dims);
  for (int64_t t = 0; t < total; ++t) {
    int64_t rem = t, gi = 0;
    for (int a = 0; a < r; ++a) {
      const int64_t c = rem / st[a];
      rem %= st[a];
      if (!reduced[a]) gi = gi * dims[a] + c;
    }
    g[t] = gi;
  }
  return g;
}
}  // namespace

OPFORGE_OP(MeanVarianceNormalization, "ai.onnx::MeanVarianceNormalization")
    .doc("Mean and variance normalization over the given axes.")
    .input("X")
    .output("Y")
    .attr<std::vector<int64_t>>("axes", std::vector<int64_t>{0, 2, 3})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      OPFORGE_RETURN_IF_ERROR(
          normAxes(c, c.attr<std::vector<int64_t>>("axes"), x.rank(), "axes").status());
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int r = x.desc.rank();
      std::vector<bool> reduced(static_cast<size_t>(r), false);
      for (int64_t a : k.attr<std::vector<int64_t>>("axes")) reduced[wrapAxis(a, r)] = true;
      int64_t groups = 0;
      const auto g = groupsOf(x.desc.dims, reduced, &groups);
      const int64_t total = x.numel();
      const double per = groups > 0 ? static_cast<double>(total) / static_cast<double>(groups) : 0;
      return visitTypes<kFloats>(x.desc.dtype, "MeanVarianceNormalization", [&](auto num) {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        std::vector<double> mean(static_cast<size_t>(groups), 0),
            var(static_cast<size_t>(groups), 0);
        for (int64_t t = 0; t < total; ++t) mean[g[t]] += N::load(px[t]);
        for (auto& m : mean) m /= per;
        for (int64_t t = 0; t < total; ++t) {
          const double d = N::load(px[t]) - mean[g[t]];
          var[g[t]] += d * d;
        }
        for (int64_t t = 0; t < total; ++t) {
          const double sd = std::sqrt(var[g[t]] / per);
          py[t] = N::store(static_cast<C>((N::load(px[t]) - mean[g[t]]) / (sd + 1e-9)));
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
