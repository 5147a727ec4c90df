// combos.h — type combinations of the built-in ops in TensorRT's grammar (op.h), spelled from the
// TypeSet an op's shape rule accepts. They keep strong typing exact (every accepted type is
// listed) and let --fp16 / --bf16 run float layers in reduced precision.
#pragma once

#include <string>

#include "../../common/dtype_dispatch.h"

namespace opforge::ops {

// "FP32|FP16|BF16|FP64|INT8|..." for the types in `set`; sep '*' lists independent choices.
inline std::string comboTypes(unsigned set, char sep = '|') {
  static const std::pair<unsigned, const char*> kOrder[] = {
      {kF32, "FP32"},   {kF16, "FP16"},   {kBF16, "BF16"}, {kF64, "FP64"}, {kI8, "INT8"},
      {kI16, "INT16"},  {kI32, "INT32"},  {kI64, "INT64"}, {kU8, "UINT8"}, {kU16, "UINT16"},
      {kU32, "UINT32"}, {kU64, "UINT64"}, {kBools, "BOOL"}};
  std::string s;
  for (const auto& [bit, name] : kOrder)
    if (set & bit) s += (s.empty() ? "" : std::string(1, sep)) + name;
  return s;
}

// Index inputs that may be INT32 or INT64, chosen independently of everything else.
inline const char* kIndexTypes = "INT32*INT64";

}  // namespace opforge::ops
