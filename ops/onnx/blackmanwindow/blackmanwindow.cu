// CUDA tactic of ai.onnx::BlackmanWindow, cuda.direct (common/window_cuda.cuh): a thread per
// element.
#include "blackmanwindow.h"

#include "../common/window_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::BlackmanWindow", [](OpDef& d) {
  d.tactic(1, "cuda.direct", windowCuda(kBlackmanWindow, "BlackmanWindow"), linearOnly);
});

}  // namespace opforge::ops
