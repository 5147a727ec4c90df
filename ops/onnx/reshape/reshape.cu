// CUDA tactic of ai.onnx::Reshape: the same bytes under a new shape (common/copy_tactic.cuh) —
// nothing to do when the output shares the input's memory, else one device copy.
#include "../common/copy_tactic.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Reshape", [](OpDef& d) { addCopyTactic(d, "Reshape"); });

}  // namespace opforge::ops
