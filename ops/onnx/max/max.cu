// CUDA tactic of ai.onnx::Max: one broadcasting pass over all inputs (common/nary_cuda.cuh).
#include "../common/nary_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Max", naryTactics<kNumeric>("Max", NanMaxF{}));

}  // namespace opforge::ops
