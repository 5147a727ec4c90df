// pass_ints.h — the integer contents of a graph value that a graph pass in ops/ may rely on: a
// constant's (INT32/INT64), else the shape tracker's when every element is a known number.
#pragma once

#include <optional>
#include <vector>

#include "graph/graph.h"
#include "util.h"

namespace opforge::ops {

// The values of v, or nullopt (not INT32/INT64, or not known when the network is built).
inline std::optional<std::vector<int64_t>> knownInts(const graph::Graph& g, int v) {
  if (v < 0) return std::nullopt;
  const graph::Value& val = g.values[v];
  if (val.constant) {
    const TensorValue& c = *val.constant;
    const DataType t = c.desc.dtype;
    if (t != DataType::kInt64 && t != DataType::kInt32) return std::nullopt;
    if (c.data.size() < static_cast<size_t>(c.desc.numel()) * dtypeSize(t)) return std::nullopt;
    return readInts(Tensor{c.desc, const_cast<uint8_t*>(c.data.data()), Device::kCpu});
  }
  if (!val.sym_value || (val.dtype != DataType::kInt64 && val.dtype != DataType::kInt32))
    return std::nullopt;
  std::vector<int64_t> out;
  for (const DimExpr& e : *val.sym_value) {
    if (!e.isConst()) return std::nullopt;
    out.push_back(e.constValue());
  }
  return out;
}

}  // namespace opforge::ops
