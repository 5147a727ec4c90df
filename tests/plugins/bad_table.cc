// A library whose C op table is malformed in the way $OPFORGE_TEST_BAD_TABLE says ("null_key",
// "null_ops", "null_run", "negative_count", "null_free"): the engine must refuse it with a clear
// error instead of aborting or crashing on the table.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "opforge/plugin_abi.h"

namespace {
int32_t inferStub(const OpforgeOp*, const uint8_t*, uint64_t, OpforgeBuffer*, char*, uint64_t) {
  return 9;
}
int32_t createStub(const OpforgeOp*, const uint8_t*, uint64_t, void**, char*, uint64_t) {
  return 9;
}
void destroyStub(void*) {}
int32_t queryStub(void*, int32_t, const OpforgeTensor*, int32_t, const OpforgeTensor*, int32_t,
                  uint64_t*) {
  return 0;
}
int32_t runStub(void*, const OpforgeKernelArgs*) {
  return 9;
}
void freeStub(OpforgeBuffer*) {}

OpforgeOp g_op;
OpforgeLibrary g_lib;
}  // namespace

extern "C" __attribute__((visibility("default"))) uint32_t opforge_plugin_abi_version() {
  return OPFORGE_PLUGIN_ABI_VERSION;
}

extern "C" __attribute__((visibility("default"))) const OpforgeLibrary* opforge_plugin_get_library(
    uint32_t) {
  const char* env = std::getenv("OPFORGE_TEST_BAD_TABLE");
  const std::string_view mode = env ? env : "";
  g_op = OpforgeOp{};
  g_op.struct_size = sizeof(OpforgeOp);
  g_op.key = "test::bad_table_op";
  g_op.version = "1";
  g_op.infer = &inferStub;
  g_op.create = &createStub;
  g_op.destroy = &destroyStub;
  g_op.query_tactic = &queryStub;
  g_op.run = &runStub;
  g_lib = OpforgeLibrary{};
  g_lib.struct_size = sizeof(OpforgeLibrary);
  g_lib.abi_version = OPFORGE_PLUGIN_ABI_VERSION;
  g_lib.name = "bad_table";
  g_lib.version = "0";
  g_lib.num_ops = 1;
  g_lib.ops = &g_op;
  g_lib.free_buffer = &freeStub;
  if (mode == "null_key") g_op.key = nullptr;
  if (mode == "null_ops") g_lib.ops = nullptr;
  if (mode == "null_run") g_op.run = nullptr;
  if (mode == "negative_count") g_lib.num_ops = -3;
  if (mode == "null_free") g_lib.free_buffer = nullptr;
  return &g_lib;
}
