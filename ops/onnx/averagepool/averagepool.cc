// ONNX AveragePool: mean over each window. count_include_pad = 0 divides by the number of input
// elements in the window; = 1 also counts explicit padding (but not the extra cells ceil_mode
// adds past the padded input).
#include "../common/combos.h"
#include "../common/pooling.h"

namespace opforge::ops {
OPFORGE_OP(AveragePool, "ai.onnx::AveragePool")
    .kind("pooling")
    .doc("Average pooling over N-D windows.")
    .combos(comboTypes(kFloats))
    .input("X")
    .output("Y")
    .with(windowAttrs)
    .attr<int64_t>("ceil_mode", int64_t{0})
    .attr<int64_t>("count_include_pad", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> { return poolShape(c, kFloats); })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      OPFORGE_ASSIGN_OR_RETURN(Window w, poolWindow(k.attrs(), x.desc.rank()));
      const std::vector<int64_t> isz(x.desc.dims.begin() + 2, x.desc.dims.end());
      const std::vector<int64_t> osz(out[0].desc.dims.begin() + 2, out[0].desc.dims.end());
      resolvePads(w, isz);
      const bool include_pad = k.attr<int64_t>("count_include_pad") != 0;
      const int64_t planes = x.desc.dims[0] * x.desc.dims[1], ip = prodOf(isz, 0, w.nd),
                    op = prodOf(osz, 0, w.nd);
      return visitTypes<kFloats>(x.desc.dtype, "AveragePool", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t p = 0; p < planes; ++p) {
          const auto* xp = px + p * ip;
          forEachPoolWindow(
              w, isz, osz, [&](int64_t o, const int64_t* taps, int64_t n, int64_t padded) {
                double sum = 0;
                for (int64_t t = 0; t < n; ++t) sum += N::load(xp[taps[t]]);
                const int64_t count = include_pad ? padded : n;
                py[p * op + o] =
                    N::store(static_cast<C>(count ? sum / static_cast<double>(count) : 0.0));
              });
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
