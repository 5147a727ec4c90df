// libnewop_ns_ops.so: the ops of this project behind opforge's plugin ABI (its two exported C
// functions). Load it with `opforge exec --plugins=` or opforge.load_library() in Python.
#include "opforge/plugin_export.h"

OPFORGE_PLUGIN_LIBRARY("newop_ns_ops", "0.1.0");
