// fused_gelu.h — opforge::FusedGelu's stage list: the engine's (ops/core/fused_gelu/gelu_stages.h)
// under the contrib namespace, for the op, its backward and their tests.
#pragma once

#include "../../core/fused_gelu/gelu_stages.h"

namespace opforge::contrib {
using namespace ::opforge::gelu;
}  // namespace opforge::contrib
