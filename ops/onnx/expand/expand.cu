// CUDA tactic of ai.onnx::Expand: a strided copy with zero strides on the broadcast axes (16-byte
// units over an unbroadcast innermost run); the shape comes from the planned output.
#include "../common/movement.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Expand", [](OpDef& d) {
  d.tactic(
      1, "cuda.strided",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor &x = in[0], &y = out[0];
        return launchStridedCopy(x.data, y.data, dtypeSize(x.desc.dtype), y.desc.dims,
                                 broadcastStrides(x.desc.dims, y.desc.dims), 0, streamOf(k),
                                 "Expand");
      },
      linearOnly);
});

}  // namespace opforge::ops
