// value_inputs.h — what the builder hands a shape rule for a value input, for the test harnesses
// that call shape rules directly (tests/op_harness.cc, tests/gpu/gpu_runner.cc).
#pragma once

#include <optional>
#include <vector>

#include "opforge/op.h"
#include "opforge/shape.h"

namespace opforge::test {

// The integer values of a small INT32/INT64 constant as dimension expressions (Reshape's shape,
// Slice's starts, ...); nullopt for other types or more than 4096 elements, as in the builder.
inline std::optional<std::vector<DimExpr>> intValues(const TensorValue& t) {
  const int64_t n = t.desc.numel();
  if (n > 4096 || (t.desc.dtype != DataType::kInt32 && t.desc.dtype != DataType::kInt64))
    return std::nullopt;
  std::vector<DimExpr> v;
  for (int64_t i = 0; i < n; ++i)
    v.emplace_back(t.desc.dtype == DataType::kInt64
                       ? reinterpret_cast<const int64_t*>(t.data.data())[i]
                       : int64_t{reinterpret_cast<const int32_t*>(t.data.data())[i]});
  return v;
}

}  // namespace opforge::test
