// Registers example::circ_pad_plugin v1, which libopforge_ops.so also registers.
#include "opforge/plugin_export.h"
#include "trivial_op.h"

TEST_TRIVIAL_OP(dup, "example::circ_pad_plugin");
OPFORGE_PLUGIN_LIBRARY("duplicate", "0");
