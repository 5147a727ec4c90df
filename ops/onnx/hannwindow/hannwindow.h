// hannwindow.h — HannWindow's coefficients (common/window.h), for its reference and CUDA tactic.
#pragma once

#include "../common/window.h"

namespace opforge::ops {

inline constexpr WindowCoeffs kHannWindow{0.5, 0.5, 0};

}  // namespace opforge::ops
