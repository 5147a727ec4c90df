// dead_nodes: removes nodes none of whose outputs reach a network output and none of whose
// data-dependent sizes a kept tensor's dims name (an opforge::ReadValues whose values decide a
// shape stays when the shape input it read was dropped).
#include <set>

#include "../passes.h"

namespace opforge::graph {
namespace {

Status removeDeadNodes(PassContext& ctx) {
  Graph& g = ctx.g;
  std::vector<bool> live(g.values.size(), false);
  std::set<std::string> symbols;  // named by the dims, assertions and bounds of what is kept
  for (int v : g.outputs) {
    live[v] = true;
    for (const auto& d : g.values[v].dims) d.collectSymbols(symbols);
  }
  for (auto it = ctx.order.rbegin(); it != ctx.order.rend(); ++it) {
    Node& node = g.nodes[*it];
    if (node.dead) continue;
    bool needed = false;
    for (int v : node.outputs) needed |= live[v];
    for (const auto& s : node.size_tensors) needed |= symbols.count(s.symbol) > 0;
    if (!needed) {
      node.dead = true;
      ++ctx.counters["dead removed"];
      continue;
    }
    for (int v : node.inputs)
      if (v >= 0) live[v] = true;
    // (Its inputs' dims are their producers' outputs, collected when those are reached: every
    // producer comes after it in this reverse walk and before the sizes it reads.)
    for (int v : node.outputs)
      for (const auto& d : g.values[v].dims) d.collectSymbols(symbols);
    for (const auto& a : node.assertions) {
      a.lhs.collectSymbols(symbols);
      a.rhs.collectSymbols(symbols);
    }
    for (const auto& s : node.size_tensors) {
      s.opt.collectSymbols(symbols);
      s.upper.collectSymbols(symbols);
    }
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(dead_nodes, 900, removeDeadNodes);

}  // namespace opforge::graph
