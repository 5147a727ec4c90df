// mha_fusion: the head split and merge of an exported nn.MultiheadAttention folded into its
// FusedAttention (after attention_fusion). PyTorch's TorchScript export splits the packed in_proj
// output P [S, B, 3E] into heads as
//   Reshape [S, B, 3, E] -> Unsqueeze(0) -> Transpose(3, 1, 2, 0, 4) -> Squeeze(3) -> Gather(0|1|2)
//   -> Reshape [S, B*H, d] -> Transpose(1, 0, 2) -> Reshape [B, H, S, d]      (Q, K, V)
// and merges them back with Transpose(2, 0, 1, 3) [S, B, H, d]. All of it is index arithmetic:
// one opforge::FusedAttention with layout "sb3e" (ops/core/fused_attention/attention_views.h)
// reads Q, K and V straight from P and writes [S, B, H, d] — 12 data-movement layers fewer. Every
// op's attributes and every shape are checked; each intermediate value feeds only the chain; S and
// d must be static. Any sequence length: the layout's CUDA tactics are cuda.fused (K and V in
// shared memory), cuda.composite (any size) and cuda.flash (FP16/BF16).
// Runs only with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

using fusion::Matcher;

std::optional<std::vector<int64_t>> ints(const Matcher& m, const Node& n, int input,
                                         const char* attr) {
  if (static_cast<int>(n.inputs.size()) > input && n.inputs[input] >= 0) {
    const Value& v = m.graph().values[n.inputs[input]];
    if (!v.constant || (v.dtype != DataType::kInt64 && v.dtype != DataType::kInt32))
      return std::nullopt;
    std::vector<int64_t> out;
    for (int64_t i = 0; i < v.constant->desc.numel(); ++i)
      out.push_back(static_cast<int64_t>(loadAsDouble(v.constant->data.data(), v.dtype, i)));
    return out;
  }
  const AttrValue* a = n.attrs.find(attr);
  const auto* p = a ? std::get_if<std::vector<int64_t>>(a) : nullptr;
  if (!p) return std::nullopt;
  return *p;
}

bool perm(const Node& n, std::vector<int64_t> want) {
  const AttrValue* a = n.attrs.find("perm");
  const auto* p = a ? std::get_if<std::vector<int64_t>>(a) : nullptr;
  return p && *p == want;
}

bool dimsAre(const Matcher& m, int v, const std::vector<DimExpr>& want) {
  const auto& d = m.graph().values[v].dims;
  if (d.size() != want.size()) return false;
  for (size_t i = 0; i < d.size(); ++i)
    if (!d[i].sameAs(want[i])) return false;
  return true;
}

// The producer of v if it is `key` and v feeds only `consumer`.
int only(const Matcher& m, int v, const char* key, int consumer) {
  const int p = m.producer(v);
  if (!m.is(p, key) || m.soleConsumer(v) != consumer) return -1;
  return p;
}

struct Head {
  int gather = -1, q1 = -1;
  int64_t index = -1;
  std::vector<int> nodes;
};

// x [B, H, S, d] <- Reshape <- Transpose(1, 0, 2) <- Reshape [S, B*H, d] <- Gather(Q1, i, axis 0).
std::optional<Head> headOf(const Matcher& m, int x, int attn, const DimExpr& S, const DimExpr& B,
                           int64_t H, int64_t d) {
  Head h;
  const int r3 = only(m, x, "ai.onnx::Reshape", attn);
  if (r3 < 0) return std::nullopt;
  const int t = only(m, m.graph().nodes[r3].inputs[0], "ai.onnx::Transpose", r3);
  if (t < 0 || !perm(m.graph().nodes[t], {1, 0, 2})) return std::nullopt;
  const int r1 = only(m, m.graph().nodes[t].inputs[0], "ai.onnx::Reshape", t);
  if (r1 < 0 || !dimsAre(m, m.out(r1), {S, B * H, d})) return std::nullopt;
  const int g = only(m, m.graph().nodes[r1].inputs[0], "ai.onnx::Gather", r1);
  if (g < 0 || m.graph().nodes[g].attrs.get<int64_t>("axis") != 0) return std::nullopt;
  const int idx = m.graph().nodes[g].inputs[1];
  const Value& iv = m.graph().values[idx];
  if (!iv.constant || iv.constant->desc.rank() != 0) return std::nullopt;
  h.index = static_cast<int64_t>(loadAsDouble(iv.constant->data.data(), iv.dtype, 0));
  h.gather = g;
  h.q1 = m.graph().nodes[g].inputs[0];
  h.nodes = {r3, t, r1, g};
  return h;
}

Status fuseMha(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedAttention");
  if (!fused) return Status::ok();
  Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int attn = ctx.order[step];
    if (!m.is(attn, "opforge::FusedAttention")) continue;
    const Node& an = g.nodes[attn];
    if (an.attrs.get<std::string>("layout") != "bhsd" ||
        an.attrs.get<int64_t>("k_transposed") != 0 ||
        an.inputs.size() > 3)  // a bias (attention mask): sb3e has none
      continue;
    const auto& qd = g.values[an.inputs[0]].dims;
    if (qd.size() != 4 || !qd[1].isConst() || !qd[2].isConst() || !qd[3].isConst()) continue;
    const DimExpr B = qd[0], S = qd[2];
    const int64_t H = qd[1].constValue(), d = qd[3].constValue(), E = H * d;
    // The merge: Transpose(2, 0, 1, 3) of the output.
    const int merge = m.soleConsumer(m.out(attn));
    if (!m.is(merge, "ai.onnx::Transpose") || !perm(g.nodes[merge], {2, 0, 1, 3})) continue;
    std::optional<Head> heads[3];
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i) {
      heads[i] = headOf(m, an.inputs[i], attn, S, B, H, d);
      ok = heads[i] && heads[i]->index == i && heads[i]->q1 == heads[0]->q1;
    }
    if (!ok) continue;
    // The split: Q1 [3, S, B, E] <- Squeeze(3) <- Transpose(3, 1, 2, 0, 4) <- Unsqueeze(0) <-
    // Reshape(P).
    const int q1 = heads[0]->q1;
    if (m.uses(q1).size() != 3 || g.values[q1].is_output || !dimsAre(m, q1, {3, S, B, E})) continue;
    const int sq = m.producer(q1);
    if (!m.is(sq, "ai.onnx::Squeeze") || ints(m, g.nodes[sq], 1, "axes") != std::vector<int64_t>{3})
      continue;
    const int t2 = only(m, g.nodes[sq].inputs[0], "ai.onnx::Transpose", sq);
    if (t2 < 0 || !perm(g.nodes[t2], {3, 1, 2, 0, 4})) continue;
    const int un = only(m, g.nodes[t2].inputs[0], "ai.onnx::Unsqueeze", t2);
    if (un < 0 || ints(m, g.nodes[un], 1, "axes") != std::vector<int64_t>{0}) continue;
    const int r2 = only(m, g.nodes[un].inputs[0], "ai.onnx::Reshape", un);
    if (r2 < 0 || !dimsAre(m, m.out(r2), {S, B, 3, E})) continue;
    const int p = g.nodes[r2].inputs[0];
    if (!dimsAre(m, p, {S, B, 3 * E})) continue;
    std::vector<int> nodes{r2, un, t2, sq};
    for (const auto& h : heads) nodes.insert(nodes.end(), h->nodes.begin(), h->nodes.end());
    nodes.push_back(attn);
    nodes.push_back(merge);
    AttrMap attrs;
    attrs.set("scale", an.attrs.get<double>("scale"));
    attrs.set("k_transposed", int64_t{0});
    attrs.set("layout", std::string("sb3e"));
    attrs.set("heads", H);
    if (!m.tryReplace(fused, attrs, {p, p, p}, nodes, merge, "mha_fusion")) continue;
    ++ctx.counters["attention head split/merge folded"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(mha_fusion, 275, fuseMha);

}  // namespace opforge::graph
