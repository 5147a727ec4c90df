// CUDA tactic of ai.onnx::HannWindow, cuda.direct (common/window_cuda.cuh): a thread per element.
#include "hannwindow.h"

#include "../common/window_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::HannWindow", [](OpDef& d) {
  d.tactic(1, "cuda.direct", windowCuda(kHannWindow, "HannWindow"), linearOnly);
});

}  // namespace opforge::ops
