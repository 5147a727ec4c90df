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
      {kFloats, "FP32"},    {kFloats, "FP16"},     {kFloats, "BF16"},     {kFloats, "FP64"},
      {kSigned, "INT8"},    {kSigned, "INT16"},    {kSigned, "INT32"},    {kSigned, "INT64"},
      {kUnsigned, "UINT8"}, {kUnsigned, "UINT16"}, {kUnsigned, "UINT32"}, {kUnsigned, "UINT64"},
      {kBools, "BOOL"}};
  std::string s;
  for (const auto& [bit, name] : kOrder)
    if (set & bit) s += (s.empty() ? "" : std::string(1, sep)) + name;
  return s;
}

// Index inputs that may be INT32 or INT64, chosen independently of everything else.
inline const char* kIndexTypes = "INT32*INT64";

}  // namespace opforge::ops
