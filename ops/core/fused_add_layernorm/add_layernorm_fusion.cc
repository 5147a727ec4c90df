// add_layernorm_fusion: Add(X, R) -> LayerNormalization becomes one opforge::FusedAddLayerNorm
// (ops/core/fused_add_layernorm). The Add's inputs and output must have one shape (no
// broadcasting) and the LayerNormalization's Mean / InvStdDev outputs be unused. Where the sum
// feeds only the LayerNormalization it is never written to memory; where it is read again (a
// pre-LN transformer's residual stream: ViT, GPT-2), the fused node writes it as its Sum output,
// provided every other reader comes after the LayerNormalization in the execution order and the
// Add and the LayerNormalization have the same guards. The fused node is named
// "<add>+<layernorm>".
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include <algorithm>

#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

// Where node n stands in the execution order (the order's size when it is not there).
size_t position(const PassContext& ctx, int n) {
  return static_cast<size_t>(std::find(ctx.order.begin(), ctx.order.end(), n) - ctx.order.begin());
}

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
    const int sum = lnode.inputs[0];
    const int add = m.producer(sum);
    if (!m.is(add, "ai.onnx::Add")) continue;
    // The sum as the LayerNormalization's scale or bias too: the fused node would read the value
    // it writes (found by fuzz_onnx_struct).
    if (lnode.inputs[1] == sum || (lnode.inputs.size() > 2 && lnode.inputs[2] == sum)) continue;
    const bool shared = m.soleConsumer(sum) != ln;
    if (shared) {  // read again: only after the LayerNormalization, under the same guards
      if (g.nodes[add].guards != lnode.guards) continue;
      bool later = true;
      for (int u : m.uses(sum))
        if (u != ln) later = later && position(ctx, u) > step;
      if (!later) continue;
    }
    const auto& ai = g.nodes[add].inputs;
    if (!m.sameShape(ai[0], sum) || !m.sameShape(ai[1], sum)) continue;
    AttrMap attrs;
    attrs.set("axis", lnode.attrs.get<int64_t>("axis"));
    attrs.set("epsilon", lnode.attrs.get<double>("epsilon"));
    attrs.set("sum_output", int64_t{shared ? 1 : 0});
    std::vector<int> inputs{ai[0], ai[1], lnode.inputs[1],
                            lnode.inputs.size() > 2 ? lnode.inputs[2] : -1};
    auto nn = m.replace(fused, attrs, inputs, {add, ln}, ln, "add_layernorm_fusion");
    if (!nn) {
      if (ctx.log)
        ctx.log(std::string("warning: add_layernorm_fusion: not fused: ") + nn.status().message());
      continue;
    }
    if (shared) {  // the Add's output value is now the fused node's Sum
      Node& f = g.nodes[*nn];
      const int fresh = f.outputs[1];
      f.outputs[1] = sum;
      g.values[sum].producer = *nn;
      g.values[sum].producer_output = 1;
      g.values[fresh].producer = -1;
      g.values[fresh].producer_output = -1;
      m.rebuild();
    }
    ++ctx.counters[shared ? "Add + LayerNormalization fused, the sum kept"
                          : "Add + LayerNormalization fused"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(add_layernorm_fusion, 280, fuseAddLayerNorm);

}  // namespace opforge::graph
