// CUDA tactic of ai.onnx::Sum: one broadcasting pass over all inputs (common/nary_cuda.cuh).
#include "../common/nary_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Sum", naryTactics<kNumeric>("Sum", PlusF{}));

}  // namespace opforge::ops
