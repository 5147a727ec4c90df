// constant_folding: evaluates nodes of built-in ops whose inputs are all constants (plugins are
// never folded: a plan must show the plugin the user asked for).
#include "../fold.h"
#include "../passes.h"

namespace opforge::graph {
namespace {

Status foldConstants(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  Graph& g = ctx.g;
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead || !node.op->builtin() || !node.size_tensors.empty()) continue;
    bool all_const = true;
    for (int v : node.inputs) all_const &= v < 0 || g.values[v].constant != nullptr;
    for (int v : node.outputs)
      for (const auto& d : g.values[v].dims) all_const &= d.isConst();
    if (!all_const) continue;
    // foldNode: the limits of fold.h (a huge result stays a node), empty outputs not computed,
    // an If branch's node that fails left as a node.
    OPFORGE_ASSIGN_OR_RETURN(bool folded, foldNode(g, n, 0));
    if (!folded) continue;
    ++ctx.counters["folded to constants"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(constant_folding, 100, foldConstants);

}  // namespace opforge::graph
