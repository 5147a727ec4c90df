// plugin_table.h — the C table (opforge/plugin_abi.h) of a list of OpDefs (internal): what
// OPFORGE_PLUGIN_LIBRARY exports for a shared object's static op list, and what
// Registry::addOps builds for ops defined at run time.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "opforge/op.h"
#include "opforge/plugin_abi.h"

namespace opforge::detail {

// A C op table and what it points into. It is not copied or moved once filled.
struct OpTable {
  std::string name, version, error;
  std::deque<OpDef> owned;  // the OpDefs of a run-time table (a library's live in the library)
  std::deque<std::string> strings;
  std::deque<std::vector<uint8_t>> blobs;
  std::vector<OpforgeOp> ops;
  OpforgeLibrary lib{};
};

// Fills `t` (name and version set) with the entries of `defs`, which must outlive it. What is
// wrong with the list (an op defined twice, no CPU reference, no shape rule, a combination that
// does not parse) goes to t.error (the first problem, after `error`): the registry refuses the
// table with that message.
void fillTable(OpTable& t, const std::vector<const OpDef*>& defs, std::string error = "");

// A table that owns `ops` (Registry::addOps).
std::unique_ptr<OpTable> makeTable(std::string name, std::string version, std::vector<OpDef> ops);

}  // namespace opforge::detail
