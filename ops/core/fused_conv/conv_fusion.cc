// conv_fusion: Conv [-> Add(residual)] [-> activation] becomes one opforge::FusedConv
//   Y = act(conv(X, W) + B + Z)
// (ops/core/fused_conv), which the CUDA tactics run as one cuDNN call (bias, residual and ReLU
// fused) or one direct kernel, and the CPU reference runs as Conv's kernel plus one pass.
// Conditions: every intermediate value feeds only the next node of the chain and is not a network
// output; the residual has the Conv output's shape and type (no broadcasting); the activation is
// Relu, Sigmoid, Tanh, Gelu, a plain opforge::FusedGeluChain or SiLU exported as x * Sigmoid(x)
// (the convolutions of EfficientNet's MBConv blocks). Runs after batchnorm_into_conv, so
// the folded ResNet blocks (Conv+BN -> Add -> Relu) become one layer each. The fused node is named
// "<conv>+<add>+<relu>".
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

Status fuseConvs(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedConv");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int conv = ctx.order[step];
    if (!m.is(conv, "ai.onnx::Conv") || !m.isFloat(m.out(conv))) continue;
    const int y = m.out(conv);
    std::vector<int> nodes{conv};
    int last = conv, z = -1;
    std::string act = "none";
    int next = m.soleConsumer(y);
    if (m.is(next, "ai.onnx::Add")) {
      const int r = m.other(next, y);
      if (r >= 0 && m.sameShape(r, y) && m.sameShape(m.out(next), y)) {
        z = r;
        nodes.push_back(next);
        last = next;
        next = m.soleConsumer(m.out(next));
      }
    }
    if (next >= 0) {
      if (auto a = fusion::activationOf(m, next); a && m.sameShape(m.out(next), y)) {
        act = *a;
        nodes.push_back(next);
        last = next;
      }
    } else if (auto sw = fusion::silu(m, m.out(last))) {  // x * Sigmoid(x): two readers
      act = "silu";
      nodes.insert(nodes.end(), sw->begin(), sw->end());
      last = sw->back();
    }
    if (last == conv) continue;
    const Node& c = g.nodes[conv];
    AttrMap attrs = c.attrs;
    attrs.set("activation", act);
    std::vector<int> inputs{c.inputs[0], c.inputs[1], c.inputs.size() > 2 ? c.inputs[2] : -1, z};
    if (!m.tryReplace(fused, attrs, inputs, nodes, last, "conv_fusion")) continue;
    ++ctx.counters["Conv chains fused"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(conv_fusion, 250, fuseConvs);

}  // namespace opforge::graph
