// gemm_fusion: MatMul -> Add(bias) [-> activation] and Gemm(transA = 0, C = [N] with beta = 1)
// [-> activation] become one opforge::FusedMatMul (ops/core/fused_gemm): Y = act(alpha A op(B) +
// bias), run by cuBLASLt with the bias (and ReLU) in its epilogue. The bias must be a constant of
// N elements broadcast over the rows ([N], [1, N], ...); the activation is Relu, Sigmoid, Tanh,
// Gelu, a plain opforge::FusedGeluChain, the erf GELU PyTorch exports (Div/Erf/Add/Mul/Mul) or SiLU
// (x * Sigmoid(x)).
// Every intermediate value must feed only the chain and not be a network output. The fused node is
// named "<matmul>+<add>+<...>".
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include <memory>

#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

Status fuseGemms(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedMatMul");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int n0 = ctx.order[step];
    const bool matmul = m.is(n0, "ai.onnx::MatMul"), gemm = m.is(n0, "ai.onnx::Gemm");
    if (!matmul && !gemm) continue;
    const int y = m.out(n0);
    if (!m.isFloat(y)) continue;
    const Node& node = g.nodes[n0];
    const int a = node.inputs[0], b = node.inputs[1];
    if (g.values[a].dims.size() < 2 || g.values[b].dims.size() < 2) continue;
    const DimExpr n = g.values[y].dims.back();
    AttrMap attrs;
    attrs.set("transB", int64_t{0});
    attrs.set("alpha", 1.0);
    int bias = -1;
    std::vector<int> nodes{n0};
    int last = n0;
    if (gemm) {
      if (node.attrs.get<int64_t>("transA") != 0) continue;
      attrs.set("transB", node.attrs.get<int64_t>("transB"));
      attrs.set("alpha", node.attrs.get<double>("alpha"));
      if (node.inputs.size() > 2 && node.inputs[2] >= 0 && node.attrs.get<double>("beta") != 0) {
        if (node.attrs.get<double>("beta") != 1) continue;
        bias = fusion::rowBias(g, node.inputs[2], n);
        if (bias < 0) continue;
      }
    } else {
      const int add = m.soleConsumer(y);
      if (m.is(add, "ai.onnx::Add") && m.sameShape(m.out(add), y)) {
        bias = fusion::rowBias(g, m.other(add, y), n);
        if (bias >= 0) {
          nodes.push_back(add);
          last = add;
        }
      }
    }
    const int cur = m.out(last);
    std::string act = "none";
    const int next = m.soleConsumer(cur);
    int after_view = -1;  // an activation after a Reshape of the product, applied before it
    if (next >= 0) {
      if (auto ac = fusion::activationOf(m, next); ac && m.sameShape(m.out(next), cur)) {
        act = *ac;
        nodes.push_back(next);
        last = next;
      } else if (m.is(next, "ai.onnx::Reshape")) {  // Conv1D's addmm viewed back (GPT-2)
        const int a = m.soleConsumer(m.out(next));
        const auto ac = a >= 0 ? fusion::activationOf(m, a) : std::nullopt;
        if (ac && g.nodes[a].inputs.size() == 1 && g.nodes[a].outputs.size() == 1 &&
            !g.values[m.out(a)].is_output && m.sameShape(m.out(a), m.out(next)) &&
            g.values[m.out(a)].format == g.values[m.out(next)].format) {
          act = *ac;
          after_view = a;
        }
      }
    } else if (auto chain = fusion::erfGelu(m, cur);
               chain && m.sameShape(m.out(chain->back()), cur)) {
      act = "gelu";
      nodes.insert(nodes.end(), chain->begin(), chain->end());
      last = chain->back();
    } else if (auto sw = fusion::silu(m, cur)) {  // x * Sigmoid(x): LLaMA's gate projection
      act = "silu";
      nodes.insert(nodes.end(), sw->begin(), sw->end());
      last = sw->back();
    }
    if (last == n0 && gemm && after_view < 0) continue;      // a lone Gemm has its bias epilogue
    if (last == n0 && bias < 0 && after_view < 0) continue;  // nothing to fuse into a MatMul
    attrs.set("activation", act);
    if (!m.tryReplace(fused, attrs, {a, b, bias}, nodes, last, "gemm_fusion")) continue;
    ++ctx.counters["MatMul/Gemm chains fused"];
    // Elementwise, the activation commutes with the view: its readers read the view instead
    // (the conditions bypass checks were checked above, so it cannot refuse here).
    if (after_view >= 0 && m.bypass(after_view, "gemm_fusion"))
      ++ctx.counters["activations after a view fused into the GEMM"];
  }
  return Status::ok();
}

// gemm_residual: Add(FusedMatMul(...) without activation, r) with r of the sum's shape becomes the
// FusedMatMul with r as its residual (cuBLASLt reads it as C): ConvNeXt's residual Adds once
// transpose_sinking has moved the permutation below them. A sum a LayerNormalization reads is left
// to add_layernorm_fusion (280), which keeps the sum and the normalization in one kernel.
Status fuseResiduals(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedMatMul");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int add = ctx.order[step];
    if (!m.is(add, "ai.onnx::Add") || g.nodes[add].inputs.size() != 2) continue;
    const int sum = m.out(add);
    bool normalized = false;
    for (int u : m.uses(sum)) normalized = normalized || m.is(u, "ai.onnx::LayerNormalization");
    if (normalized) continue;
    for (int k = 0; k < 2; ++k) {
      const int y = g.nodes[add].inputs[k], r = g.nodes[add].inputs[1 - k];
      const int f = m.producer(y);
      if (!m.is(f, "opforge::FusedMatMul") || m.soleConsumer(y) != add || y == r) continue;
      const Node& fn = g.nodes[f];
      if (fn.attrs.get<std::string>("activation") != "none") continue;
      if (fn.inputs.size() > 3 && fn.inputs[3] >= 0) continue;
      if (!m.sameShape(y, sum) || !m.sameShape(r, sum)) continue;
      std::vector<int> inputs = {fn.inputs[0], fn.inputs[1],
                                 fn.inputs.size() > 2 ? fn.inputs[2] : -1, r};
      const AttrMap attrs = fn.attrs;
      if (!m.tryReplace(fused, attrs, inputs, {f, add}, add, "gemm_residual")) continue;
      ++ctx.counters["residual Adds fused into a GEMM"];
      break;
    }
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(gemm_fusion, 260, fuseGemms);
OPFORGE_GRAPH_PASS(gemm_residual, 266, fuseResiduals);  // after transpose_sinking (264)

}  // namespace opforge::graph
