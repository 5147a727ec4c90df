// swiglu.h — SwiGLU's formula, for its reference and CUDA tactic.
#pragma once

#include <cmath>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

// a * sigmoid(alpha * a) * b in double; the sigmoid in the form that does not overflow (as Swish).
OPFORGE_HOST_DEVICE inline double swiglu(double a, double b, double alpha) {
  const double z = alpha * a;
  const double s = z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z));
  return a * s * b;
}

}  // namespace opforge::ops
