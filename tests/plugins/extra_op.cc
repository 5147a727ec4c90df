// A well-formed library with one op (test::copy v2), to check versions and aliases.
#include "opforge/plugin_export.h"
#include "trivial_op.h"

TEST_TRIVIAL_OP(copy2, "test::copy").version("2").alias("legacy::Copy");
OPFORGE_PLUGIN_LIBRARY("extra", "0");
