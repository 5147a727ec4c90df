// fused_gelu.cuh — the fused GELU stages' device math (ops/core/fused_gelu/gelu_stages.cuh) under
// the contrib namespace.
#pragma once

#include "../../core/fused_gelu/gelu_stages.cuh"
#include "fused_gelu.h"

namespace opforge::contrib::cu {
using namespace ::opforge::gelu::cu;
}  // namespace opforge::contrib::cu
