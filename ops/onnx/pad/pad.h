// pad.h — what Pad's shape rule, kernels and graph passes (pad_constant_params, pad_conv_fusion)
// share: the begin and end pad of every axis from ONNX's pads and axes.
#pragma once

#include <utility>
#include <vector>

#include "../common/util.h"

namespace opforge::ops {

// Pads per input axis (begin, end) from the given pads and axes.
inline Result<std::pair<std::vector<int64_t>, std::vector<int64_t>>> expandPads(
    const std::vector<int64_t>& pads, const std::vector<int64_t>& axes, int r) {
  std::vector<int64_t> ax = axes;
  if (ax.empty())
    for (int i = 0; i < r; ++i) ax.push_back(i);
  if (pads.size() != 2 * ax.size())
    return Status::invalid("pads has " + std::to_string(pads.size()) + " values; " +
                           std::to_string(2 * ax.size()) + " expected (two per padded axis)");
  std::vector<int64_t> b(r, 0), e(r, 0);
  for (size_t i = 0; i < ax.size(); ++i) {
    if (ax[i] < -r || ax[i] >= r)
      return Status::invalid("axes value " + std::to_string(ax[i]) + " is out of range for rank " +
                             std::to_string(r));
    const int a = wrapAxis(ax[i], r);
    b[a] = pads[i];
    e[a] = pads[i + ax.size()];
  }
  return std::make_pair(b, e);
}

}  // namespace opforge::ops
