// CUDA tactic of ai.onnx::Mean: one broadcasting pass over all inputs (common/nary_cuda.cuh).
#include "../common/nary_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Mean", naryTactics<kFloats>("Mean", PlusF{}, true));

}  // namespace opforge::ops
