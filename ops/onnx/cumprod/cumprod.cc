// ONNX CumProd (opset 26): running product along an axis (common/cumulative.h).
#include "../common/cumulative.h"

namespace opforge::ops {
OPFORGE_OP(CumProd, "ai.onnx::CumProd")
    .doc("Cumulative product along an axis.")
    .with(cumulativeOp<true>("CumProd"));
}  // namespace opforge::ops
