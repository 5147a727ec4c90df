// CUDA tactic of ai.onnx::AveragePool: one thread per output element (common/pool_cuda.cuh), sums
// in double.
#include "../common/pool_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::AveragePool", [](OpDef& d) {
  d.tactic(
      1, "cuda.window",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_ASSIGN_OR_RETURN(PoolGeomDev g, poolGeomOf(k.attrs(), in[0].desc, out[0].desc));
        if (g.planes * g.op == 0) return Status::ok();
        const bool include_pad = k.attr<int64_t>("count_include_pad") != 0;
        return visitDevice<kFloats>(in[0].desc.dtype, "AveragePool", [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          poolKernel<S, false><<<blocksFor(g.planes * g.op), kThreads, 0, streamOf(k)>>>(
              g, static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), nullptr, false,
              include_pad);
          return launched("AveragePool");
        });
      },
      linearOnly);
});

}  // namespace opforge::ops
