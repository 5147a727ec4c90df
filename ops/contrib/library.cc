// libopforge_ops.so: the contrib ops (ops/contrib/*) behind opforge's plugin ABI.
#include "opforge/plugin_export.h"
#include "opforge/version.h"

OPFORGE_PLUGIN_LIBRARY("opforge_ops", OPFORGE_VERSION_STRING);
