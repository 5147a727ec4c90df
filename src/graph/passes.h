// passes.h — graph passes run by the builder before shapes are checked and formats chosen.
//
// Each pass lives in its own file under src/graph/passes/ and registers itself with one line:
//
//   OPFORGE_GRAPH_PASS(dead_nodes, 900, removeDeadNodes);
//
// Passes run in ascending `order`; every pass has its own order number (runPasses refuses two
// passes with the same number, so the order never depends on registration order). A pass may mark
// nodes dead, turn values into constants, and append new nodes (graph::addNode); it must then keep
// `order` (the execution order, node indices) topological. Passes keep node names (a fused node
// takes the name of the node it replaces, or "<a>+<b>") so errors and profiles still point at the
// ONNX nodes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph.h"

namespace opforge::graph {

struct PassContext {
  Graph& g;
  std::vector<int>& order;  // live nodes in execution order
  const Registry& registry;
  bool constant_folding = true;
  std::function<void(const std::string&)> log;  // may be empty
  std::map<std::string, int> counters;          // "<pass>: <what>" -> count, printed by the builder
  std::vector<std::string> ran;                 // "<name> (<order>)" of each pass run, in order
  std::vector<std::string> disabled;            // names of passes not to run (checked to exist)
};

struct PassInfo {
  std::string name;
  int order = 0;
};

using PassFn = std::function<Status(PassContext&)>;

bool registerPass(const std::string& name, int order, PassFn fn);
// The registered passes in the order they run.
std::vector<PassInfo> registeredPasses();
// Runs every registered pass in order; then drops dead nodes from ctx.order.
Status runPasses(PassContext& ctx);

}  // namespace opforge::graph

#define OPFORGE_GRAPH_PASS(name, order, fn)                                \
  [[maybe_unused]] static const bool OPFORGE_CONCAT(opforge_pass_, name) = \
      ::opforge::graph::registerPass(#name, order, fn)
