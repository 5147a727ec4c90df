// hammingwindow.h — HammingWindow's coefficients (common/window.h), for its reference and CUDA
// tactic.
#pragma once

#include "../common/window.h"

namespace opforge::ops {

inline constexpr WindowCoeffs kHammingWindow{25.0 / 46.0, 21.0 / 46.0, 0};

}  // namespace opforge::ops
