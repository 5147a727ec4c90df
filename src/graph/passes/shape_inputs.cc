// shape_inputs: drops run-time inputs whose values only matter when the plan is built: the inputs
// an op declares with OpDef::shapeInput (IoDef::shape_only: Reshape's shape, Expand's shape,
// Tile's repeats, ConstantOfShape's shape, Split's split sizes, TopK's K, (Un)Squeeze's axes)
// decide output shapes, which the shape rules have already computed (symbolically, for dynamic
// batches); the kernels of these ops (CPU and CUDA) never read them then.
// With the input omitted, the Shape -> Gather -> Unsqueeze -> Concat chains that compute them at
// run time become dead and dead_nodes removes them — tens of tiny layers in an exported
// transformer. Constant inputs are left alone (they cost nothing at run time), and so are values
// not known when the plan is built (a TopK's K computed from data).
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include "../passes.h"

namespace opforge::graph {
namespace {

Status dropShapeInputs(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  Graph& g = ctx.g;
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead) continue;
    const auto& decls = node.op->schema().inputs;
    for (size_t i = 0; i < node.inputs.size() && i < decls.size(); ++i) {
      if (!decls[i].shape_only) continue;
      const int v = node.inputs[i];
      // Only values the shape rule knew: a run-time one (TopK's K from data) is read by a kernel.
      if (v < 0 || g.values[v].constant || !g.values[v].sym_value) continue;
      node.inputs[i] = -1;
      ++ctx.counters["build-time shape inputs dropped"];
    }
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(shape_inputs, 850, dropShapeInputs);

}  // namespace opforge::graph
