// known_values: outputs whose integer contents are known when the network is built (Shape of a
// static tensor, Gather of such a shape, ...; graph::Value::sym_value fully constant) become
// constants, and their nodes go. Constant folding (order 100) then continues from them.
#include <cstring>

#include "../passes.h"

namespace opforge::graph {
namespace {

Status foldKnownValues(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  Graph& g = ctx.g;
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead || !node.op->builtin() || !node.size_tensors.empty() || node.outputs.empty())
      continue;
    bool known = true;
    for (int v : node.outputs) {
      const Value& val = g.values[v];
      if (!val.sym_value || (val.dtype != DataType::kInt64 && val.dtype != DataType::kInt32) ||
          val.dims.size() > 1) {
        known = false;
        break;
      }
      int64_t numel = 1;
      for (const auto& d : val.dims) {
        known = known && d.isConst();
        numel *= d.constValue();
      }
      known = known && static_cast<size_t>(numel) == val.sym_value->size();
      for (const auto& e : *val.sym_value) known = known && e.isConst();
      if (!known) break;
    }
    if (!known) continue;
    for (int v : node.outputs) {
      Value& val = g.values[v];
      auto t = std::make_shared<TensorValue>();
      t->desc.dtype = val.dtype;
      for (const auto& d : val.dims) t->desc.dims.push_back(d.constValue());
      t->data.resize(t->desc.bytes());
      for (size_t i = 0; i < val.sym_value->size(); ++i) {
        const int64_t x = (*val.sym_value)[i].constValue();
        if (val.dtype == DataType::kInt64) {
          std::memcpy(t->data.data() + i * 8, &x, 8);
        } else {
          const int32_t y = static_cast<int32_t>(x);
          std::memcpy(t->data.data() + i * 4, &y, 4);
        }
      }
      val.constant = std::move(t);
      val.producer = -1;
    }
    node.dead = true;
    ++ctx.counters["known shape values made constant"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(known_values, 50, foldKnownValues);

}  // namespace opforge::graph
