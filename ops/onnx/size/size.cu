// CUDA tactic of ai.onnx::Size: the element count is known on the host; a small kernel writes it.
#include "../common/movement.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Size", [](OpDef& d) {
  d.tactic(1, "cuda.write",
           [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
             return writeInt64s(static_cast<int64_t*>(out[0].data), {in[0].numel()}, streamOf(k),
                                "Size");
           });
});

}  // namespace opforge::ops
