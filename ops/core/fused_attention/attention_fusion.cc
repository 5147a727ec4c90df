// attention_fusion: the scaled dot-product attention PyTorch exports,
//   MatMul(Mul(Q, a), Mul(Transpose(K), b)) -> Softmax(last axis) -> MatMul(., V)
// (each Mul optional, a and b one-element constants, the Transpose swapping the last two axes or
// absent — then K arrives transposed), becomes one opforge::FusedAttention (ops/core/
// fused_attention) with scale = a * b: on the GPU one kernel per (batch, head) instead of six
// layers. Q, K^T and V must have rank >= 2 and the same leading axes; every intermediate value
// feeds only the chain and is not a network output. The fused node is named after the nodes it
// replaces, joined with '+'.
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

bool swapsLastTwo(const Node& t, int rank) {
  const AttrValue* p = t.attrs.find("perm");
  const auto* perm = p ? std::get_if<std::vector<int64_t>>(p) : nullptr;
  if (!perm || static_cast<int>(perm->size()) != rank || rank < 2) return false;
  for (int i = 0; i + 2 < rank; ++i)
    if ((*perm)[i] != i) return false;
  return (*perm)[rank - 2] == rank - 1 && (*perm)[rank - 1] == rank - 2;
}

// Softmax over the last axis (opset 13+ axis -1 / rank - 1; older: the 2-D flattening at rank - 1).
bool lastAxisSoftmax(const Node& s, int rank) {
  const AttrValue* a = s.attrs.find("axis");
  const AttrValue* o = s.attrs.find("_onnx_opset");
  const int64_t opset = o && std::holds_alternative<int64_t>(*o) && std::get<int64_t>(*o) > 0
                            ? std::get<int64_t>(*o)
                            : 1000;
  int64_t axis = opset < 13 ? 1 : -1;
  if (a && std::holds_alternative<int64_t>(*a)) axis = std::get<int64_t>(*a);
  if (axis < 0) axis += rank;
  return axis == rank - 1;
}

Status fuseAttention(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedAttention");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int mm1 = ctx.order[step];
    if (!m.is(mm1, "ai.onnx::MatMul") || !m.isFloat(m.out(mm1))) continue;
    const int scores = m.out(mm1);
    const int rank = static_cast<int>(g.values[scores].dims.size());
    if (rank < 2) continue;
    const int sm = m.soleConsumer(scores);
    if (!m.is(sm, "ai.onnx::Softmax") || !lastAxisSoftmax(g.nodes[sm], rank)) continue;
    const int mm2 = m.soleConsumer(m.out(sm));
    if (!m.is(mm2, "ai.onnx::MatMul") || g.nodes[mm2].inputs[0] != m.out(sm)) continue;
    std::vector<int> nodes{mm1, sm, mm2};
    double scale = 1.0;
    // Unwraps an optional Mul by a one-element constant (that feeds only this chain).
    auto unscale = [&](int v) {
      const int p = m.producer(v);
      if (!m.is(p, "ai.onnx::Mul") || m.soleConsumer(v) < 0) return v;
      const auto& in = g.nodes[p].inputs;
      for (int side = 0; side < 2; ++side)
        if (auto c = m.scalar(in[side]); c && m.sameShape(in[1 - side], v)) {
          scale *= *c;
          nodes.push_back(p);
          return in[1 - side];
        }
      return v;
    };
    const int q = unscale(g.nodes[mm1].inputs[0]);
    int k = unscale(g.nodes[mm1].inputs[1]);
    int64_t k_transposed = 1;
    const int tp = m.producer(k);
    if (m.is(tp, "ai.onnx::Transpose") && m.soleConsumer(k) >= 0 &&
        swapsLastTwo(g.nodes[tp], rank)) {
      nodes.push_back(tp);
      k = g.nodes[tp].inputs[0];
      k_transposed = 0;
    }
    const int v = g.nodes[mm2].inputs[1];
    if (g.values[q].dims.size() != static_cast<size_t>(rank) ||
        g.values[k].dims.size() != static_cast<size_t>(rank) ||
        g.values[v].dims.size() != static_cast<size_t>(rank))
      continue;
    bool same = true;
    for (int a = 0; a + 2 < rank && same; ++a)
      same = g.values[q].dims[a].sameAs(g.values[k].dims[a]) &&
             g.values[q].dims[a].sameAs(g.values[v].dims[a]);
    if (!same) continue;
    AttrMap attrs;
    attrs.set("scale", scale);
    attrs.set("k_transposed", k_transposed);
    if (!m.tryReplace(fused, attrs, {q, k, v}, nodes, mm2, "attention_fusion")) continue;
    ++ctx.counters["attention blocks fused"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(attention_fusion, 270, fuseAttention);

}  // namespace opforge::graph
