// CUDA tactic of ai.onnx::BitCast (common/copy_tactic.cuh), cuda.copy: one device-to-device copy
// of the input's bytes on the layer's stream (the output has another type, so it never shares the
// input's memory).
#include "../common/copy_tactic.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::BitCast", [](OpDef& d) { addCopyTactic(d, "BitCast"); });

}  // namespace opforge::ops
