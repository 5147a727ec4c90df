// ONNX BlackmanWindow (opset 17): the Blackman window, w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi
// n / N) with (a0, a1, a2) = (0.42, 0.5, 0.08); the definition is shared with the other windows
// (common/window.h).
#include "blackmanwindow.h"

namespace opforge::ops {

OPFORGE_OP(BlackmanWindow, "ai.onnx::BlackmanWindow")
    .doc("The Blackman window of a given length.")
    .with(windowOp)
    .cpu(windowReference(kBlackmanWindow));

}  // namespace opforge::ops
