// opforge/io.h — writing files all or nothing.
//
// Contract:
//   - writeFileAtomic writes `bytes` to a temporary file beside `path` ("<path>.tmp-<pid>") and
//     renames it over `path`, so a reader sees the old file (or none) or the whole new one. Any
//     failure (no such folder, disk full, `path` is a directory) leaves no partial file, not even
//     the temporary one. It does not fsync: a power loss may still lose the new file.
//   - Errors are StatusCode::kIo and name the path and the system error.
//
// Usage:
//   auto plan = builder.buildSerializedNetwork(net, cfg);       // Result<std::vector<uint8_t>>
//   if (plan) OPFORGE_RETURN_IF_ERROR(opforge::writeFileAtomic("model.plan", *plan));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opforge/status.h"

namespace opforge {

Status writeFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace opforge
