// ONNX HammingWindow (opset 17): the Hamming window, w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n
// / N) with (a0, a1, a2) = (25.0 / 46.0, 21.0 / 46.0, 0); the definition is shared with the other
// windows (common/window.h).
#include "hammingwindow.h"

namespace opforge::ops {

OPFORGE_OP(HammingWindow, "ai.onnx::HammingWindow")
    .doc("The Hamming window of a given length.")
    .with(windowOp)
    .cpu(windowReference(kHammingWindow));

}  // namespace opforge::ops
