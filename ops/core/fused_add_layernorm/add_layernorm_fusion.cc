// add_layernorm_fusion: Add(X, R) -> LayerNormalization becomes one opforge::FusedAddLayerNorm
// (ops/core/fused_add_layernorm): the residual sum is normalized without being written to memory.
// The Add's inputs and output must have one shape (no broadcasting), its output feed only the
// LayerNormalization, and the LayerNormalization's Mean / InvStdDev outputs be unused. The fused
// node is named "<add>+<layernorm>".
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

Status fuseAddLayerNorm(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedAddLayerNorm");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int ln = ctx.order[step];
    if (!m.is(ln, "ai.onnx::LayerNormalization")) continue;
    const Node& lnode = g.nodes[ln];
    bool stats_used = false;
    for (size_t o = 1; o < lnode.outputs.size(); ++o)
      stats_used =
          stats_used || !m.uses(lnode.outputs[o]).empty() || g.values[lnode.outputs[o]].is_output;
    if (stats_used) continue;
    const int add = m.producer(lnode.inputs[0]);
    if (!m.is(add, "ai.onnx::Add") || m.soleConsumer(lnode.inputs[0]) != ln) continue;
    const auto& ai = g.nodes[add].inputs;
    if (!m.sameShape(ai[0], lnode.inputs[0]) || !m.sameShape(ai[1], lnode.inputs[0])) continue;
    AttrMap attrs;
    attrs.set("axis", lnode.attrs.get<int64_t>("axis"));
    attrs.set("epsilon", lnode.attrs.get<double>("epsilon"));
    std::vector<int> inputs{ai[0], ai[1], lnode.inputs[1],
                            lnode.inputs.size() > 2 ? lnode.inputs[2] : -1};
    if (!m.tryReplace(fused, attrs, inputs, {add, ln}, ln, "add_layernorm_fusion")) continue;
    ++ctx.counters["Add + LayerNormalization fused"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(add_layernorm_fusion, 280, fuseAddLayerNorm);

}  // namespace opforge::graph
