// CUDA tactic of ai.onnx::Flatten: the same bytes under a new shape (common/copy_tactic.cuh) —
// nothing to do when the output shares the input's memory, else one device copy.
#include "../common/copy_tactic.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Flatten", [](OpDef& d) { addCopyTactic(d, "Flatten"); });

}  // namespace opforge::ops
