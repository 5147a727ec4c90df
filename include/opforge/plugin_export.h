// opforge/plugin_export.h — turns the OpDefs of a shared object into an op library.
//
// Put exactly one line in one source file of the library:
//
//   #include "opforge/plugin_export.h"
//   OPFORGE_PLUGIN_LIBRARY("opforge_ops", "0.1.0");
//
// It defines the two exported C functions of opforge/plugin_abi.h. Build the library with
// -fvisibility=hidden (the CMake function opforge_add_op_library does) so that its op list,
// and everything else, stays private to it.
#pragma once

#include "opforge/plugin_abi.h"

namespace opforge::detail {
// Builds (once) the C table of every op registered in this shared object.
const OpforgeLibrary* libraryTable(const char* name, const char* version,
                                   uint32_t engine_abi_version);
}  // namespace opforge::detail

#define OPFORGE_PLUGIN_LIBRARY(name, version)                                               \
  extern "C" __attribute__((visibility("default"))) uint32_t opforge_plugin_abi_version() { \
    return OPFORGE_PLUGIN_ABI_VERSION;                                                      \
  }                                                                                         \
  extern "C" __attribute__((visibility("default"))) const OpforgeLibrary*                   \
  opforge_plugin_get_library(uint32_t engine_abi_version) {                                 \
    return ::opforge::detail::libraryTable(name, version, engine_abi_version);              \
  }                                                                                         \
  static_assert(true, "")
