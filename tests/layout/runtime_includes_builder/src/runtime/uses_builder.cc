// A fixture for scripts/check-layout.sh (never compiled): the runtime including the builder's
// internals. The public header is allowed; the second include is not.
#include "builder/autotune.h"
#include "opforge/builder.h"
