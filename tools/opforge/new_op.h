// new_op.h — `opforge new-op ns::name [--dir D] [--cuda]`: writes the skeleton of a new op (its
// definition and CPU reference, a CUDA tactic stub that registers nothing until it is written, a
// README spec, a test of the reference) from the templates in tools/opforge/new_op/, either into
// opforge's own tree (ops/contrib/<name>/) or as a complete project built against an installed
// opforge (<dir>/<name>/ with its CMakeLists.txt).
#pragma once

#include <string>
#include <vector>

#include "opforge/status.h"

namespace opforge::cli {

struct NewOpTemplate {
  const char* file;  // its name under tools/opforge/new_op/
  const char* text;
};
// The templates, embedded in the binary at build time (embed.cmake).
const std::vector<NewOpTemplate>& newOpTemplates();

struct NewOpOptions {
  std::string key;  // "ns::name"
  std::string dir;  // empty: ops/contrib of the opforge tree around the working directory, else .
  bool cuda = false;
};

// What new-op wrote: the folder, whether it is inside opforge's tree, and its files.
struct NewOpResult {
  std::string folder;
  bool in_tree = false;
  std::vector<std::string> files;
};

// Checks the key (an identifier, "::", an identifier; the namespace none of a shipped op:
// `shipped_namespaces`), then writes the folder all or nothing: an existing folder is never
// touched, and on any error nothing is left behind.
Result<NewOpResult> newOp(const NewOpOptions& o,
                          const std::vector<std::string>& shipped_namespaces);

}  // namespace opforge::cli
