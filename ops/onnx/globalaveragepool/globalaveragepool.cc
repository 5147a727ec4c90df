// ONNX GlobalAveragePool: mean over all spatial axes of each (n, c).
#include "../common/global_pool.h"

namespace opforge::ops {
OPFORGE_OP(GlobalAveragePool, "ai.onnx::GlobalAveragePool")
    .kind("pooling")
    .doc("Mean over the spatial axes.")
    .with(globalPoolOp<false>("GlobalAveragePool"));
}  // namespace opforge::ops
