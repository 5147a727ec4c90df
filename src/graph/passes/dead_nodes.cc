// dead_nodes: removes nodes none of whose outputs reach a network output.
#include "../passes.h"

namespace opforge::graph {
namespace {

Status removeDeadNodes(PassContext& ctx) {
  Graph& g = ctx.g;
  std::vector<bool> live(g.values.size(), false);
  for (int v : g.outputs) live[v] = true;
  for (auto it = ctx.order.rbegin(); it != ctx.order.rend(); ++it) {
    Node& node = g.nodes[*it];
    if (node.dead) continue;
    bool needed = false;
    for (int v : node.outputs) needed |= live[v];
    if (!needed) {
      node.dead = true;
      ++ctx.counters["dead removed"];
      continue;
    }
    for (int v : node.inputs)
      if (v >= 0) live[v] = true;
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(dead_nodes, 900, removeDeadNodes);

}  // namespace opforge::graph
