// ONNX GlobalMaxPool: maximum over all spatial axes of each (n, c).
#include "../common/global_pool.h"

namespace opforge::ops {
OPFORGE_OP(GlobalMaxPool, "ai.onnx::GlobalMaxPool")
    .kind("pooling")
    .doc("Maximum over the spatial axes.")
    .with(globalPoolOp<true>("GlobalMaxPool"));
}  // namespace opforge::ops
