// blackmanwindow.h — BlackmanWindow's coefficients (common/window.h), for its reference and CUDA
// tactic.
#pragma once

#include "../common/window.h"

namespace opforge::ops {

inline constexpr WindowCoeffs kBlackmanWindow{0.42, 0.5, 0.08};

}  // namespace opforge::ops
