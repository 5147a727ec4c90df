// ONNX HannWindow (opset 17): the Hann window, w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
// with (a0, a1, a2) = (0.5, 0.5, 0); the definition is shared with the other windows
// (common/window.h).
#include "hannwindow.h"

namespace opforge::ops {

OPFORGE_OP(HannWindow, "ai.onnx::HannWindow")
    .doc("The Hann window of a given length.")
    .with(windowOp)
    .cpu(windowReference(kHannWindow));

}  // namespace opforge::ops
