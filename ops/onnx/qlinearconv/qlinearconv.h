// qlinearconv.h — what QLinearConv's CPU reference and CUDA tactic share.
#pragma once

#include "../common/qlinear.h"

namespace opforge::ops {

// Run time: the parameter counts (x and y per tensor, w per tensor or per output channel, B of M).
inline Status qlinearConvCounts(std::span<const Tensor> in) {
  const int64_t m = in[3].desc.rank() > 0 ? in[3].desc.dims[0] : 0;
  for (auto [i, name] : {std::pair<size_t, const char*>{1, "x_scale"},
                         {2, "x_zero_point"},
                         {6, "y_scale"},
                         {7, "y_zero_point"}})
    OPFORGE_RETURN_IF_ERROR(checkQCount(in, i, name, 0));
  OPFORGE_RETURN_IF_ERROR(checkQCount(in, 4, "w_scale", m));
  if (in[5].numel() != in[4].numel())
    return Status::invalid("inputs 'w_scale' and 'w_zero_point' have " +
                           std::to_string(in[4].numel()) + " and " + std::to_string(in[5].numel()) +
                           " elements");
  if (hasIn(in, 8) && in[8].numel() != m)
    return Status::invalid("input 'B' has " + std::to_string(in[8].numel()) +
                           " elements, not M = " + std::to_string(m));
  return Status::ok();
}

}  // namespace opforge::ops
