// grad_check.h — finite differences in float64 for the contrib ops' backward tests (test-only).
//
// fdGradient(run, inputs, which, dy, h) returns d<dy, f(inputs)>/d inputs[which] by central
// differences: for every element e of inputs[which], (L(x + h e) - L(x - h e)) / 2h with
// L = sum(dy * f(x)). `run` evaluates the forward op (FP64 tensors) and returns its output.
// Elements where the one-sided differences disagree by more than `kink_tol` (a kink of a
// piecewise-linear function, e.g. a bilinear cell boundary) are reported as NaN so the caller
// can skip them.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "opforge/op.h"

namespace opforge::test {

inline double dotFp64(const TensorValue& a, const TensorValue& b) {
  const auto* pa = reinterpret_cast<const double*>(a.data.data());
  const auto* pb = reinterpret_cast<const double*>(b.data.data());
  double s = 0;
  for (int64_t i = 0; i < a.desc.numel(); ++i) s += pa[i] * pb[i];
  return s;
}

inline std::vector<double> fdGradient(
    const std::function<TensorValue(const std::vector<TensorValue>&)>& run,
    std::vector<TensorValue> inputs, size_t which, const TensorValue& dy, double h,
    double kink_tol = INFINITY) {
  const int64_t n = inputs[which].desc.numel();
  std::vector<double> g(n);
  const double l0 = dotFp64(dy, run(inputs));
  for (int64_t i = 0; i < n; ++i) {
    auto* p = reinterpret_cast<double*>(inputs[which].data.data());
    const double x = p[i];
    p[i] = x + h;
    const double lp = dotFp64(dy, run(inputs));
    p[i] = x - h;
    const double lm = dotFp64(dy, run(inputs));
    p[i] = x;
    const double fwd = (lp - l0) / h, bwd = (l0 - lm) / h;
    g[i] = std::fabs(fwd - bwd) > kink_tol * (1 + std::fabs(fwd) + std::fabs(bwd))
               ? NAN
               : (lp - lm) / (2 * h);
  }
  return g;
}

}  // namespace opforge::test
