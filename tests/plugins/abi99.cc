// A library that claims plugin ABI version 99: the engine must refuse it.
#define OPFORGE_PLUGIN_ABI_VERSION 99u
#include "opforge/plugin_export.h"
#include "trivial_op.h"

TEST_TRIVIAL_OP(future, "test::future_op");
OPFORGE_PLUGIN_LIBRARY("abi99", "0");
