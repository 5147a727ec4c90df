// attention_fusion: the scaled dot-product attention PyTorch exports,
//   MatMul(Mul(Q, a), Mul(Transpose(K), b)) [-> Add(., bias)] -> Softmax(last axis) -> MatMul(., V)
// (each Mul optional, a and b one-element constants, the Transpose swapping the last two axes or
// absent — then K arrives transposed; the Add is the attention mask of transformers' SDPA
// exports, Where(mask, 0, -inf), broadcast into the scores; the softmax may be followed by the
// export's Where(IsNaN(P), 0, P)), becomes one opforge::FusedAttention (ops/core/fused_attention)
// with scale = a * b, the bias as its fourth input and nan_to_zero for the Where: on the GPU one
// kernel instead of six to nine layers (attention_heads, later, reads the exporter's head
// Transposes in place). Q, K^T and V must have rank
// >= 2 and the same leading axes; every intermediate value feeds only the chain and is not a
// network output. The fused node is named after the nodes it replaces, joined with '+'. Runs only
// with constant folding on (BuilderConfig::constant_folding, the optimization switch).
#include <optional>
#include <utility>

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

// Whether adding `bias` keeps the scores' shape: its type, at most their rank, each axis 1 or the
// scores' (a symbolic axis that may differ becomes FusedAttention's run-time assertion of
// equality — exporters broadcast a mask of the same length, so a mask that relies on a run-time
// length of 1 to broadcast is refused with an error naming the node, not computed wrongly).
bool broadcastsInto(const Value& bias, const Value& scores) {
  if (bias.dtype != scores.dtype || bias.dims.size() > scores.dims.size()) return false;
  const size_t off = scores.dims.size() - bias.dims.size();
  for (size_t a = 0; a < bias.dims.size(); ++a) {
    const DimExpr &b = bias.dims[a], &s = scores.dims[off + a];
    if (b.isConst() && s.isConst() && b.constValue() != s.constValue() && b.constValue() != 1)
      return false;
  }
  return true;
}

// PyTorch's SDPA export after the softmax: Where(IsNaN(P), 0, P), P feeding only those two nodes
// (a query that sees no key gets zeros, not NaN): the (IsNaN, Where) nodes.
std::optional<std::pair<int, int>> nanGuard(const fusion::Matcher& m, int probs) {
  const auto& u = m.uses(probs);
  if (u.size() != 2 || m.graph().values[probs].is_output) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const int isn = u[i], wh = u[1 - i];
    if (!m.is(isn, "ai.onnx::IsNaN") || !m.is(wh, "ai.onnx::Where")) continue;
    const auto& w = m.graph().nodes[wh].inputs;
    const auto zero = w.size() == 3 ? m.scalar(w[1]) : std::nullopt;
    if (w[0] == m.out(isn) && m.soleConsumer(m.out(isn)) == wh && zero && *zero == 0 &&
        w[2] == probs && m.sameShape(m.out(wh), probs))
      return std::pair{isn, wh};
  }
  return std::nullopt;
}

// Swin's shifted windows: the scores [X, H, Sq, Sk] (plus a constant relative-position bias b1)
// viewed as [X / W, W, H, Sq, Sk] by a Reshape, a constant mask b2 [1, W, 1 | H, Sq, Sk] added,
// and a Reshape back. One constant [W, H, Sq, Sk] = b1 + b2 then serves as FusedAttention's bias
// with windows = W (batch x reads row x mod W, as the view did).
struct WindowBias {
  std::vector<int> nodes;  // the two Reshapes and the Add
  int bias = -1, next = -1;
  int64_t windows = 0;
};

std::optional<WindowBias> windowBias(fusion::Matcher& m, int r1, int scores, int b1) {
  Graph& g = m.graph();
  const auto& sd = g.values[scores].dims;
  if (!m.is(r1, "ai.onnx::Reshape") || sd.size() != 4) return std::nullopt;
  for (int a = 1; a < 4; ++a)
    if (!sd[a].isConst()) return std::nullopt;
  const auto& v5 = g.values[m.out(r1)].dims;
  if (v5.size() != 5 || !v5[1].isConst() || v5[1].constValue() < 1) return std::nullopt;
  for (int a = 2; a < 5; ++a)
    if (!v5[a].sameAs(sd[a - 1])) return std::nullopt;
  const int add = m.soleConsumer(m.out(r1));
  if (!m.is(add, "ai.onnx::Add")) return std::nullopt;
  const int b2 = m.other(add, m.out(r1));
  if (b2 < 0 || !g.values[b2].constant || !m.sameShape(m.out(add), m.out(r1))) return std::nullopt;
  const int r2 = m.soleConsumer(m.out(add));
  if (!m.is(r2, "ai.onnx::Reshape") || !m.sameShape(m.out(r2), scores)) return std::nullopt;
  const int64_t W = v5[1].constValue(), H = sd[1].constValue(), Sq = sd[2].constValue(),
                Sk = sd[3].constValue();
  const std::vector<int64_t> target{W, H, Sq, Sk};
  // A constant's element strides over `target`, its axes aligned right (leading axes beyond
  // target's rank must have extent 1); nullopt if it does not broadcast so.
  auto strides = [&](const TensorValue& t) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> d = t.desc.dims;
    while (d.size() > target.size()) {
      if (d.front() != 1) return std::nullopt;
      d.erase(d.begin());
    }
    const size_t off = target.size() - d.size();
    std::vector<int64_t> st(target.size(), 0);
    int64_t step = 1;
    for (size_t a = d.size(); a-- > 0;) {
      if (d[a] != 1 && d[a] != target[off + a]) return std::nullopt;
      st[off + a] = d[a] == 1 ? 0 : step;
      step *= d[a];
    }
    return st;
  };
  const TensorValue& t2 = *g.values[b2].constant;
  if (t2.desc.dtype != g.values[scores].dtype || t2.desc.rank() > 5) return std::nullopt;
  auto s2 = strides(t2);
  std::optional<std::vector<int64_t>> s1;
  const TensorValue* t1 = nullptr;
  if (b1 >= 0) {
    if (!g.values[b1].constant) return std::nullopt;
    t1 = g.values[b1].constant.get();
    // b1 broadcasts into [X, H, Sq, Sk] with X's axis 1 (or absent): the same for every window.
    if (t1->desc.rank() > 4 || (t1->desc.rank() == 4 && t1->desc.dims[0] != 1)) return std::nullopt;
    s1 = strides(*t1);
    if (s1) (*s1)[0] = 0;
  }
  if (!s2 || (b1 >= 0 && !s1)) return std::nullopt;
  auto out = std::make_shared<TensorValue>();
  out->desc = TensorDesc{t2.desc.dtype, target};
  out->data.resize(out->desc.bytes());
  int64_t i = 0;
  for (int64_t w = 0; w < W; ++w)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < Sq; ++q)
        for (int64_t k = 0; k < Sk; ++k, ++i) {
          const int64_t at[4] = {w, h, q, k};
          int64_t o2 = 0, o1 = 0;
          for (int a = 0; a < 4; ++a) {
            o2 += at[a] * (*s2)[a];
            if (t1) o1 += at[a] * (*s1)[a];
          }
          double v = loadAsDouble(t2.data.data(), t2.desc.dtype, o2);
          if (t1) v += loadAsDouble(t1->data.data(), t1->desc.dtype, o1);
          storeFromDouble(out->data.data(), out->desc.dtype, i, v);
        }
  Value val;
  val.name = g.uniqueValueName(g.nodes[add].name + ":window_bias");
  val.dtype = out->desc.dtype;
  for (int64_t d : target) val.dims.emplace_back(d);
  val.constant = std::move(out);
  WindowBias wb;
  wb.bias = g.addValue(std::move(val));
  wb.nodes = {r1, add, r2};
  wb.windows = W;
  wb.next = m.soleConsumer(m.out(r2));
  return wb;
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
    int sm = m.soleConsumer(scores), bias = -1;
    std::vector<int> nodes{mm1};
    if (m.is(sm, "ai.onnx::Add")) {  // the bias broadcasts into the scores, not the reverse
      const int add = sm;
      bias = m.other(add, scores);
      if (bias < 0 || !broadcastsInto(g.values[bias], g.values[scores])) continue;
      nodes.push_back(add);
      sm = m.soleConsumer(m.out(add));
    }
    int64_t windows = 0;
    if (m.is(sm, "ai.onnx::Reshape")) {
      const auto wb = windowBias(m, sm, scores, bias);
      if (!wb) continue;
      nodes.insert(nodes.end(), wb->nodes.begin(), wb->nodes.end());
      bias = wb->bias;
      windows = wb->windows;
      sm = wb->next;
    }
    if (!m.is(sm, "ai.onnx::Softmax") || !lastAxisSoftmax(g.nodes[sm], rank)) continue;
    nodes.push_back(sm);
    int probs = m.out(sm);
    int64_t nan_to_zero = 0;
    if (const auto guard = nanGuard(m, probs)) {
      nodes.push_back(guard->first);
      nodes.push_back(guard->second);
      probs = m.out(guard->second);
      nan_to_zero = 1;
    }
    const int mm2 = m.soleConsumer(probs);
    if (!m.is(mm2, "ai.onnx::MatMul") || g.nodes[mm2].inputs[0] != probs) continue;
    nodes.push_back(mm2);
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
    // The leading (batch, head) axes: equal, or not known to differ — FusedAttention then asserts
    // them equal at run time (T5's cross-attention: the decoder's batch and the encoder's; LLaMA's
    // dynamo export: Q's heads from a Reshape over two inputs' dims, K's a constant). Where one
    // side is the constant 1 MatMul may be broadcasting it, which FusedAttention does not: not
    // fused.
    auto lead = [&](const DimExpr& x, const DimExpr& y) {
      if (x.sameAs(y)) return true;
      if (x.isConst() && y.isConst()) return false;
      return !(x.isConst() && x.constValue() == 1) && !(y.isConst() && y.constValue() == 1);
    };
    bool same = true;
    for (int a = 0; a + 2 < rank && same; ++a)
      same = lead(g.values[q].dims[a], g.values[k].dims[a]) &&
             lead(g.values[q].dims[a], g.values[v].dims[a]);
    if (!same) continue;
    AttrMap attrs;
    attrs.set("scale", scale);
    attrs.set("nan_to_zero", nan_to_zero);
    attrs.set("k_transposed", k_transposed);
    if (windows > 0) attrs.set("windows", windows);
    std::vector<int> inputs{q, k, v};
    if (bias >= 0) inputs.push_back(bias);
    if (!m.tryReplace(fused, attrs, inputs, nodes, mm2, "attention_fusion")) continue;
    ++ctx.counters["attention blocks fused"];
    if (bias >= 0) ++ctx.counters["attention masks fused"];
    if (windows > 0) ++ctx.counters["shifted-window masks fused"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(attention_fusion, 270, fuseAttention);

}  // namespace opforge::graph
