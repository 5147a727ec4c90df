// CUDA tactic of ai.onnx::HammingWindow, cuda.direct (common/window_cuda.cuh): a thread per
// element.
#include "hammingwindow.h"

#include "../common/window_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::HammingWindow", [](OpDef& d) {
  d.tactic(1, "cuda.direct", windowCuda(kHammingWindow, "HammingWindow"), linearOnly);
});

}  // namespace opforge::ops
