// views.cc — view tactics (TacticDef::in_place): a layer with one that applies at every profile
// corner runs it, and its output takes its input's storage where nothing writes there in place.
#include <algorithm>

#include "build_state.h"

namespace opforge::build {

Result<BuildState::NodeDescs> BuildState::placedDescs(const Node& node,
                                                      const DimExpr::Lookup& look) const {
  NodeDescs d;
  for (int v : node.inputs) {
    if (v < 0) {
      d.in.push_back(TensorDesc{});
      continue;
    }
    OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(g_.values[v].dims, look));
    d.in.push_back(TensorDesc{g_.values[v].dtype, dims, g_.values[v].format});
  }
  for (int v : node.outputs) {
    OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(g_.values[v].dims, look));
    d.out.push_back(TensorDesc{g_.values[v].dtype, dims, g_.values[v].format});
  }
  return d;
}

Result<int32_t> BuildState::viewTactic(const Node& node) const {
  if (node.outputs.empty() || node.inputs.empty() || node.inputs[0] < 0) return -1;
  for (const auto& t : node.op->schema().tactics) {
    if (!t.in_place || t.backend != cfg_.backend) continue;
    const auto& allowed = node.allowed_tactics;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), t.id) == allowed.end())
      continue;
    bool applies = true;
    for (size_t prof = 0; prof < profiles_.size() && applies; ++prof)
      for (int point = 0; point < 3 && applies; ++point) {
        OPFORGE_ASSIGN_OR_RETURN(auto b, bindings(prof, point));
        OPFORGE_ASSIGN_OR_RETURN(NodeDescs d, placedDescs(node, b.lookup()));
        size_t ws = 0;
        applies = node.instance->tacticApplies(t.id, d.in, d.out, &ws);
      }
    if (applies) return t.id;
  }
  return -1;
}

Status BuildState::placeViews() {
  // A view's output shares its input's storage when neither is a network input, output or
  // constant and no layer reads either of them in place (it would write into the other). Its
  // input's producer wrote the bytes before; the view and every later reader only read them.
  std::vector<bool> read_in_place(g_.values.size(), false);
  for (int n : order_) {
    const Node& node = g_.nodes[n];
    for (size_t o = 0; o < node.aliases.size(); ++o)
      if (node.aliases[o] >= 0 && node.inputs[node.aliases[o]] >= 0)
        read_in_place[node.inputs[node.aliases[o]]] = true;
  }
  auto placeable = [&](int v) {
    const Value& val = g_.values[v];
    return !val.is_input && !val.is_output && !val.constant && !read_in_place[v];
  };
  int placed = 0;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    const auto* t = [&]() -> const OpSchema::Tactic* {
      for (const auto& x : node.op->schema().tactics)
        if (x.id == node.tactic && x.backend == cfg_.backend) return &x;
      return nullptr;
    }();
    if (!t || !t->in_place) continue;
    const int in = node.inputs[0], out = node.outputs[0];
    if (node.aliases.empty()) node.aliases.assign(node.outputs.size(), -1);
    if (node.aliases[0] == 0 || !placeable(in) || !placeable(out)) continue;
    if (g_.values[in].dtype != g_.values[out].dtype) continue;
    node.aliases[0] = 0;  // views of views, and several views of one value, share it too
    ++placed;
  }
  if (placed) pass_counters_["views run in place"] += placed;
  return Status::ok();
}

}  // namespace opforge::build
