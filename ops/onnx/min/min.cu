// CUDA tactic of ai.onnx::Min: one broadcasting pass over all inputs (common/nary_cuda.cuh).
#include "../common/nary_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Min", naryTactics<kNumeric>("Min", NanMinF{}));

}  // namespace opforge::ops
