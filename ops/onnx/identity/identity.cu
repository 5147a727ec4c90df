// CUDA tactic of ai.onnx::Identity (common/copy_tactic.cuh): nothing when the output shares the
// input's memory (the usual case: the output aliases the input), else one device copy; any format,
// the output's that of the input.
#include "../common/copy_tactic.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Identity", [](OpDef& d) {
  addCopyTactic(d, "Identity",
                [](const AttrMap&, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) { return in[0].format == out[0].format; });
});

}  // namespace opforge::ops
