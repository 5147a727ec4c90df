// common_subexpressions: two live nodes of the same built-in op with the same attributes, the same
// inputs and the same If guards compute the same values, so the later one is dropped and its
// readers read the earlier one's outputs. Exporters repeat such nodes: HuggingFace BERT's
// TorchScript export turns the one attention mask into a Where in each of its 12 layers.
//
// Inputs are compared as values, and a small constant (at most kMaxCompared bytes) equals another
// of the same type, shape, layout and bytes — the 12 Wheres read 12 copies of the same two scalars.
// Only built-in ops: their references are deterministic (the op sweep,
// ops/onnx/common/reference_test.cc, runs each twice and requires the same bits); a plugin may not
// be. Never merged: nodes with data-dependent output sizes, in-place nodes, nodes the builder
// made, and a node one of whose outputs is a network output (its name must stay).
// Runs after the fusion passes (which look for values with one reader) and only with constant
// folding on (BuilderConfig::constant_folding, the optimization switch).
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

#include "../../common/wire.h"
#include "../passes.h"

namespace opforge::graph {
namespace {

constexpr size_t kMaxCompared = 4096;

Status mergeCommonSubexpressions(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  Graph& g = ctx.g;
  // canon[v]: the value v stands for (itself, the first equal small constant, or the output of
  // the node a merged node's output now is).
  std::vector<int> canon(g.values.size());
  std::iota(canon.begin(), canon.end(), 0);
  std::map<std::tuple<int, int, std::vector<int64_t>, std::vector<uint8_t>>, int> constants;
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (!val.constant || val.is_output || val.constant->data.size() > kMaxCompared) continue;
    auto [it, fresh] = constants.emplace(
        std::make_tuple(static_cast<int>(val.constant->desc.dtype), static_cast<int>(val.format),
                        val.constant->desc.dims, val.constant->data),
        static_cast<int>(v));
    canon[v] = it->second;
  }
  std::map<std::vector<uint8_t>, int> seen;  // a node's description -> the first such node
  int merged = 0;
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead) continue;
    // Order is topological: every input's stand-in is known by now.
    for (int& v : node.inputs)
      if (v >= 0) v = canon[v];
    for (Guard& gd : node.guards) gd.cond = canon[gd.cond];
    if (!node.op->builtin() || !node.size_tensors.empty() || node.builder_made) continue;
    bool in_place = false;
    for (int a : node.aliases) in_place = in_place || a >= 0;
    bool named_output = false;
    for (int v : node.outputs) named_output = named_output || g.values[v].is_output;
    if (in_place || named_output) continue;
    wire::Writer w;
    w.str(node.op->key());
    wire::put(w, node.attrs);
    w.u64(node.inputs.size());
    for (int v : node.inputs) w.i64(v);
    w.u64(node.outputs.size());
    w.u64(node.guards.size());
    for (const Guard& gd : node.guards) {
      w.i64(gd.cond);
      w.boolean(gd.when);
    }
    auto [it, fresh] = seen.emplace(w.take(), n);
    if (fresh) continue;
    const Node& first = g.nodes[it->second];
    bool same = true;  // the shape rule saw the same inputs; checked anyway
    for (size_t o = 0; o < node.outputs.size() && same; ++o) {
      const Value &a = g.values[first.outputs[o]], &b = g.values[node.outputs[o]];
      same = a.dtype == b.dtype && a.format == b.format && a.dims.size() == b.dims.size();
      for (size_t d = 0; d < a.dims.size() && same; ++d) same = a.dims[d].sameAs(b.dims[d]);
    }
    if (!same) continue;
    for (size_t o = 0; o < node.outputs.size(); ++o) canon[node.outputs[o]] = first.outputs[o];
    node.dead = true;
    ++merged;
  }
  // Nodes after a merged one in the order were redirected above; graph outputs never moved.
  if (merged > 0) {
    ctx.counters["nodes merged with an equal one"] += merged;
    if (ctx.log)
      ctx.log("common_subexpressions: " + std::to_string(merged) +
              " node(s) merged with an equal earlier one");
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(common_subexpressions, 800, mergeCommonSubexpressions);

}  // namespace opforge::graph
