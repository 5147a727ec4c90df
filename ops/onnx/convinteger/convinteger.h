// convinteger.h — what ConvInteger's CPU reference and CUDA tactic share.
#pragma once

#include "../common/qlinear.h"

namespace opforge::ops {

// Run time: the zero points' counts (x per tensor, w per tensor or per output channel).
inline Status convIntegerCounts(std::span<const Tensor> in) {
  if (hasIn(in, 2)) OPFORGE_RETURN_IF_ERROR(checkQCount(in, 2, "x_zero_point", 0));
  if (hasIn(in, 3))
    OPFORGE_RETURN_IF_ERROR(
        checkQCount(in, 3, "w_zero_point", in[1].desc.rank() > 0 ? in[1].desc.dims[0] : 0));
  return Status::ok();
}

}  // namespace opforge::ops
