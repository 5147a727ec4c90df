// A fixture for scripts/check-layout.sh (never compiled): the builder including the runtime's
// internals. The public header is allowed; the second include is not.
#include "../runtime/memory_plan.h"
#include "opforge/runtime.h"
