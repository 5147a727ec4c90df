// matmulinteger.h — what MatMulInteger's CPU reference and CUDA tactic share.
#pragma once

#include "../common/qlinear.h"

namespace opforge::ops {

// Run time: the zero points' counts (per tensor, per row of A, per column of B).
inline Status matmulIntegerCounts(std::span<const Tensor> in) {
  const TensorDesc &a = in[0].desc, &b = in[1].desc;
  if (a.rank() == 0 || b.rank() == 0) return Status::invalid("the operands must have rank >= 1");
  if (hasIn(in, 2))
    OPFORGE_RETURN_IF_ERROR(
        checkQCount(in, 2, "a_zero_point", a.rank() == 1 ? 1 : a.dims[a.rank() - 2]));
  if (hasIn(in, 3))
    OPFORGE_RETURN_IF_ERROR(checkQCount(in, 3, "b_zero_point", b.rank() == 1 ? 1 : b.dims.back()));
  return Status::ok();
}

}  // namespace opforge::ops
