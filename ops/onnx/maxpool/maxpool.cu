// CUDA tactic of ai.onnx::MaxPool: one thread per output element (common/pool_cuda.cuh), the
// Indices output when the node lists it.
#include "../common/pool_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::MaxPool", [](OpDef& d) {
  d.tactic(
      1, "cuda.window",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_ASSIGN_OR_RETURN(PoolGeomDev g, poolGeomOf(k.attrs(), in[0].desc, out[0].desc));
        if (g.planes * g.op == 0) return Status::ok();
        auto* idx = out.size() > 1 && out[1].numel() > 0 ? static_cast<int64_t*>(out[1].data) : nullptr;
        const bool col = k.attr<int64_t>("storage_order") == 1;
        return visitDevice<kFloats | kSigned | kUnsigned>(in[0].desc.dtype, "MaxPool", [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          poolKernel<S, true><<<blocksFor(g.planes * g.op), kThreads, 0, streamOf(k)>>>(
              g, static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), idx, col, false);
          return launched("MaxPool");
        });
      },
      linearOnly);
});

}  // namespace opforge::ops
