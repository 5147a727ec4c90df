// An op whose combination is malformed: the library must fail to load with the reason.
#include "opforge/plugin_export.h"
#include "trivial_op.h"

TEST_TRIVIAL_OP(bad, "test::bad_combo").combos("FP32|FP16, FP32|FP16|BF16");
OPFORGE_PLUGIN_LIBRARY("bad_combo", "0");
