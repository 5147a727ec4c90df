// CUDA tactic of ai.onnx::Squeeze: the same bytes under a new shape (common/copy_tactic.cuh) —
// nothing to do when the output shares the input's memory, else one device copy.
#include "../common/copy_tactic.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Squeeze", [](OpDef& d) { addCopyTactic(d, "Squeeze"); });

}  // namespace opforge::ops
