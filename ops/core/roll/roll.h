// roll.h — what opforge::Roll's CPU reference and CUDA tactic share.
#pragma once

#include <vector>

#include "opforge/op.h"

namespace opforge::ops {

// The shift of every axis of a tensor of `dims`, reduced to [0, dim): 'shifts' summed per axis of
// 'axes' (an axis may repeat, as in torch.roll). Errors name the attribute and the value.
Result<std::vector<int64_t>> rollShifts(const AttrMap& attrs, const std::vector<int64_t>& dims);

}  // namespace opforge::ops
