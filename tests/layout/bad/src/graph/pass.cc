// A fixture for scripts/check-layout.sh (never compiled): an engine file that includes an op.
#include "../../ops/contrib/fused_gelu/fused_gelu.h"
