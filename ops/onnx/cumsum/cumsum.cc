// ONNX CumSum: running sum along an axis (common/cumulative.h).
#include "../common/cumulative.h"

namespace opforge::ops {
OPFORGE_OP(CumSum, "ai.onnx::CumSum")
    .doc("Cumulative sum along an axis.")
    .with(cumulativeOp<false>("CumSum"));
}  // namespace opforge::ops
