// opforge's own ops (ops/onnx, ops/core) are registered in libopforge itself and reach the
// registry through the same C table as any plugin library.
#include "opforge/plugin_export.h"
#include "opforge/version.h"

namespace opforge::detail {
const OpforgeLibrary* builtinLibrary() {
  return libraryTable("opforge-builtin", OPFORGE_VERSION_STRING, OPFORGE_PLUGIN_ABI_VERSION);
}
}  // namespace opforge::detail
