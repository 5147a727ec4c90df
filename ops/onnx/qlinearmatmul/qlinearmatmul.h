// qlinearmatmul.h — what QLinearMatMul's CPU reference and CUDA tactic share.
#pragma once

#include "../common/qlinear.h"

namespace opforge::ops {

// Run time: the parameter counts (a per tensor or per row, b per tensor or per column, y per
// tensor; each zero point as many as its scale).
inline Status qlinearMatMulCounts(std::span<const Tensor> in) {
  const TensorDesc &a = in[0].desc, &b = in[3].desc;
  if (a.rank() == 0 || b.rank() == 0) return Status::invalid("the operands must have rank >= 1");
  const int64_t rows = a.rank() == 1 ? 1 : a.dims[a.rank() - 2];
  const int64_t cols = b.rank() == 1 ? 1 : b.dims.back();
  OPFORGE_RETURN_IF_ERROR(checkQCount(in, 1, "a_scale", rows));
  OPFORGE_RETURN_IF_ERROR(checkQCount(in, 4, "b_scale", cols));
  OPFORGE_RETURN_IF_ERROR(checkQCount(in, 6, "y_scale", 0));
  OPFORGE_RETURN_IF_ERROR(checkQCount(in, 7, "y_zero_point", 0));
  for (auto [s, z] : {std::pair<size_t, size_t>{1, 2}, {4, 5}})
    if (in[s].numel() != in[z].numel())
      return Status::invalid("a scale of " + std::to_string(in[s].numel()) +
                             " elements beside a zero point of " + std::to_string(in[z].numel()));
  return Status::ok();
}

}  // namespace opforge::ops
