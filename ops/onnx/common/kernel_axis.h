// kernel_axis.h — a kernel's own check of an axis attribute against the rank it runs on.
//
// The builder checks axes in the shape rule. A loaded plan re-runs the shape rule too, except for
// a node whose shape-time inputs the builder dropped or whose value inputs are not constants of
// the plan (src/runtime/engine.cc, checkNodeAgainstOp): there the kernel sees the attribute as
// the plan stores it, and an edited plan could name an axis outside the rank. Kernels of such ops
// take their axes through kernelAxis / kernelAxes instead of wrapAxis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opforge/status.h"

namespace opforge::ops {

// `axis` in [-rank, rank) made non-negative, or an error naming the attribute and the value.
inline Result<int> kernelAxis(int64_t axis, int rank, const char* attr = "axis") {
  if (axis < -rank || axis >= rank)
    return Status::invalid("attribute '" + std::string(attr) + "' is " + std::to_string(axis) +
                           ", outside [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) +
                           "] for an input of rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Every value of a list attribute through kernelAxis.
inline Result<std::vector<int>> kernelAxes(const std::vector<int64_t>& axes, int rank,
                                           const char* attr = "axes") {
  std::vector<int> out;
  for (int64_t a : axes) {
    OPFORGE_ASSIGN_OR_RETURN(int v, kernelAxis(a, rank, attr));
    out.push_back(v);
  }
  return out;
}

}  // namespace opforge::ops
