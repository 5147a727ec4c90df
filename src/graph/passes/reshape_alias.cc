// reshape_alias: Reshape, Flatten, Squeeze and Unsqueeze write their output in place of their
// input (the same bytes under another shape) when nothing else reads that input and it is not a
// network input, output or constant — then they cost nothing at run time (their kernels skip the
// copy when the output is the input, CPU and CUDA). Elsewhere they keep copying (an in-place layer
// would only get a copy inserted before it).
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include "../passes.h"

namespace opforge::graph {
namespace {

Status aliasReshapes(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  Graph& g = ctx.g;
  std::vector<int> uses(g.values.size(), 0);
  for (int n : ctx.order)
    if (!g.nodes[n].dead)
      for (int v : g.nodes[n].inputs)
        if (v >= 0) ++uses[v];
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead || node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] < 0)
      continue;
    const std::string key = node.op->key();
    if (key != "ai.onnx::Reshape" && key != "ai.onnx::Flatten" && key != "ai.onnx::Squeeze" &&
        key != "ai.onnx::Unsqueeze")
      continue;
    if (node.aliases.empty()) node.aliases.assign(node.outputs.size(), -1);
    if (node.aliases[0] == 0) continue;
    const Value& in = g.values[node.inputs[0]];
    if (in.dtype != g.values[node.outputs[0]].dtype || in.is_input || in.is_output || in.constant)
      continue;
    if (uses[node.inputs[0]] != 1) continue;
    node.aliases[0] = 0;
    ++ctx.counters["reshapes made in place"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(reshape_alias, 950, aliasReshapes);  // after dead_nodes: only live readers count

}  // namespace opforge::graph
