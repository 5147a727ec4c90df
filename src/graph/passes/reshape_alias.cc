// reshape_alias: Reshape, Flatten, Squeeze and Unsqueeze write their output in place of their
// input (the same bytes under another shape), so they cost nothing at run time. The builder then
// inserts a copy only where the input is still needed afterwards, or is a network input, output or
// constant — the cost these layers had before — and their kernels skip the copy when the output
// is the input (CPU and CUDA).
#include "../passes.h"

namespace opforge::graph {
namespace {

Status aliasReshapes(PassContext& ctx) {
  Graph& g = ctx.g;
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead || node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] < 0) continue;
    const std::string key = node.op->key();
    if (key != "ai.onnx::Reshape" && key != "ai.onnx::Flatten" && key != "ai.onnx::Squeeze" &&
        key != "ai.onnx::Unsqueeze")
      continue;
    if (node.aliases.empty()) node.aliases.assign(node.outputs.size(), -1);
    if (node.aliases[0] == 0) continue;
    if (g.values[node.inputs[0]].dtype != g.values[node.outputs[0]].dtype) continue;
    node.aliases[0] = 0;
    ++ctx.counters["reshapes made in place"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(reshape_alias, 860, aliasReshapes);

}  // namespace opforge::graph
