// vec.cuh — the shared 16-byte vector helpers (ops/common/vec.cuh) under the contrib ops' own
// namespace, cu::Pack, cu::gridFill, ... (the element traits are ops::DNum, device_types.cuh)
#pragma once

#include "../../common/vec.cuh"

namespace opforge::contrib::cu {
using namespace ::opforge::cuvec;
}  // namespace opforge::contrib::cu
