// Two passes that let a FusedAttention read Q, K and V as the three E-wide thirds of one packed
// projection P [B, S, 3E] (layout bs3e, attention_views.h), so the projection is one GEMM and
// no Q / K / V tensor is copied:
//
// mha_batch_first (276, after mha_fusion): a batch-first nn.MultiheadAttention (torchvision's ViT,
//   batch_first=True) is exported as
//     Transpose(1, 0, 2)(x) -> in_proj GEMM -> P [S, B, 3E] -> FusedAttention sb3e -> Y [S, B, H,
//     d]
//     -> Reshape [S*B, E] -> out_proj GEMM -> Reshape [S, B, E] -> Transpose(1, 0, 2)
//   The GEMMs act on the last axis only, so the two Transposes (a copy of the activations each)
//   cancel: x -> in_proj -> P [B, S, 3E] -> FusedAttention bs3e -> [B, S, H, d] -> Reshape
//   [B, S, E] -> out_proj.
// packed_qkv (862, after attention_heads): a FusedAttention bshd whose Q, K and V are Reshapes
//   [B, S, E] -> [B, S, H, d] of
//     - the three outputs of one Split of P [B, S, 3E] into thirds (GPT-2's c_attn), or
//     - three FusedMatMuls of one input with constant weights [E_in, E] (or [E, E_in] with transB)
//       and the same alpha, no activation, constant biases or none (BERT, RoBERTa, ViT in
//       transformers, T5...): one FusedMatMul with the weights and biases concatenated,
//   becomes one FusedAttention bs3e over P (the bias, an attention mask, kept).
// Every intermediate value must feed only the chain and not be a network output; every node of a
// chain must run under the same If guards. Both run only with constant folding on (the
// optimization switch).
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

using fusion::Matcher;

bool sameGuards(const Graph& g, const std::vector<int>& nodes) {
  for (int n : nodes)
    if (g.nodes[n].guards != g.nodes[nodes[0]].guards) return false;
  return true;
}

// Every live reader of v is node n (n may read it several times), and v is not a network output.
bool onlyReadBy(const Matcher& m, int v, int n) {
  if (v < 0 || m.graph().values[v].is_output || m.uses(v).empty()) return false;
  for (int u : m.uses(v))
    if (u != n) return false;
  return true;
}

// A FusedMatMul over a constant rank-2 B (a projection acting on A's last axis).
bool isProjection(const Matcher& m, int n) {
  if (!m.is(n, "opforge::FusedMatMul")) return false;
  const Node& node = m.graph().nodes[n];
  const int b = node.inputs[1];
  return b >= 0 && m.graph().values[b].constant && m.graph().values[b].dims.size() == 2 &&
         (node.inputs.size() < 3 || node.inputs[2] < 0 ||
          m.graph().values[node.inputs[2]].constant);
}

// A projection as FusedMatMul's attributes and inputs (A first, to be replaced): a FusedMatMul as
// isProjection says, or a Gemm (transA = 0) with a constant B and a constant C of N elements
// (beta = 1) or none — what gemm_fusion leaves a lone Gemm as. nullopt otherwise.
struct Projection {
  AttrMap attrs;
  std::vector<int> inputs;
};
std::optional<Projection> projectionOf(const Matcher& m, int n) {
  const Graph& g = m.graph();
  if (isProjection(m, n)) return Projection{g.nodes[n].attrs, g.nodes[n].inputs};
  if (!m.is(n, "ai.onnx::Gemm")) return std::nullopt;
  const Node& node = g.nodes[n];
  const int b = node.inputs[1];
  if (node.attrs.get<int64_t>("transA") != 0 || !g.values[b].constant) return std::nullopt;
  Projection p;
  p.attrs.set("transB", node.attrs.get<int64_t>("transB"));
  p.attrs.set("alpha", node.attrs.get<double>("alpha"));
  p.attrs.set("activation", std::string("none"));
  p.inputs = {node.inputs[0], b};
  if (node.inputs.size() > 2 && node.inputs[2] >= 0 && node.attrs.get<double>("beta") != 0) {
    const int c = node.inputs[2];
    const auto& yd = g.values[m.out(n)].dims;
    if (node.attrs.get<double>("beta") != 1 || !g.values[c].constant || !yd.back().isConst() ||
        g.values[c].constant->desc.numel() != yd.back().constValue() ||
        g.values[c].constant->desc.dims.back() != yd.back().constValue())
      return std::nullopt;
    p.inputs.push_back(c);  // flattened to [N] by the caller (fusion::rowBias)
  }
  return p;
}

int int64Constant(Graph& g, const std::string& base, const std::vector<int64_t>& v) {
  auto t = std::make_shared<TensorValue>();
  t->desc = TensorDesc{DataType::kInt64, {static_cast<int64_t>(v.size())}};
  t->data.resize(v.size() * sizeof(int64_t));
  std::memcpy(t->data.data(), v.data(), t->data.size());
  Value val;
  val.name = g.uniqueValueName(base);
  val.dtype = DataType::kInt64;
  val.dims = {static_cast<int64_t>(v.size())};
  val.sym_value = constantAsDims(*t);  // what shape rules read
  val.constant = std::move(t);
  return g.addValue(std::move(val));
}

// New nodes made one at a time; if any step fails, those already made are marked dead and the
// graph is otherwise as it was.
class Rewrite {
 public:
  Rewrite(PassContext& ctx, const char* pass, std::vector<Guard> guards)
      : ctx_(ctx), pass_(pass), guards_(std::move(guards)) {}
  ~Rewrite() {
    if (!done_)
      for (int n : made_) ctx_.g.nodes[n].dead = true;
  }
  // The first output of a new node, or -1 (logged).
  int add(const char* key, const std::string& name, const AttrMap& attrs,
          const std::vector<int>& inputs) {
    if (failed_) return -1;
    const RegisteredOp* op = ctx_.registry.find(key);
    auto r = op ? addNode(ctx_.g, op, name, attrs, inputs, {}, false)
                : Result<int>(Status::invalid(std::string("no op ") + key));
    if (!r) {
      failed_ = true;
      if (ctx_.log)
        ctx_.log(std::string("warning: ") + pass_ + ": not rewritten: " + r.status().message());
      return -1;
    }
    ctx_.g.nodes[*r].guards = guards_;
    made_.push_back(*r);
    return ctx_.g.nodes[*r].outputs[0];
  }
  // The last node made writes value `y` (same type and shape, else false), the new nodes take
  // the order slots `slots` (one each, in order: each a slot after its inputs' producers) and
  // `dead` are marked dead.
  bool commit(Matcher& m, int y, const std::vector<int>& slots, const std::vector<int>& dead) {
    if (failed_ || made_.size() != slots.size()) return false;
    Graph& g = ctx_.g;
    const int last = made_.back(), fresh = g.nodes[last].outputs[0];
    if (!m.sameShape(fresh, y) || g.values[fresh].format != g.values[y].format) {
      if (ctx_.log) ctx_.log(std::string("warning: ") + pass_ + ": not rewritten: shapes differ");
      return false;
    }
    m.takeOutput(last, y);
    for (int n : dead) g.nodes[n].dead = true;
    for (size_t i = 0; i < slots.size(); ++i)
      for (int& k : ctx_.order)
        if (k == slots[i]) k = made_[i];
    if (ctx_.log)
      for (int n : made_)
        ctx_.log(std::string(pass_) + ": " + g.nodes[n].name + " -> " + g.nodes[n].op->key());
    done_ = true;
    m.rebuild();
    return true;
  }

 private:
  PassContext& ctx_;
  const char* pass_;
  std::vector<Guard> guards_;
  std::vector<int> made_;
  bool failed_ = false, done_ = false;
};

std::vector<int> gemmInputs(Graph& g, const Projection& p, int a, const DimExpr& n) {
  std::vector<int> in{a, p.inputs[1]};
  if (p.inputs.size() > 2 && p.inputs[2] >= 0) in.push_back(fusion::rowBias(g, p.inputs[2], n));
  return in;
}

Status foldBatchFirst(PassContext& ctx) {
  if (!ctx.constant_folding || !ctx.registry.find("opforge::FusedAttention")) return Status::ok();
  Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int attn = ctx.order[step];
    if (!m.is(attn, "opforge::FusedAttention")) continue;
    const Node& an = g.nodes[attn];
    if (an.attrs.get<std::string>("layout") != "sb3e" || an.inputs.size() != 3) continue;
    const int p = an.inputs[0];
    if (an.inputs[1] != p || an.inputs[2] != p || !onlyReadBy(m, p, attn)) continue;
    const int g1 = m.producer(p);
    const auto proj1 = projectionOf(m, g1);
    if (!proj1) continue;
    const int t1 = m.producer(g.nodes[g1].inputs[0]);
    if (!fusion::hasPerm(m, t1, {1, 0, 2})) continue;
    const int x = g.nodes[t1].inputs[0];
    const auto& pd = g.values[p].dims;  // [S, B, 3E]
    const int64_t e = pd[2].constValue() / 3;
    // Y [S, B, H, d] -> Reshape [S*B, E] -> out_proj -> Reshape [S, B, N] -> Transpose(1, 0, 2)
    const int r1 = m.soleConsumer(m.out(attn));
    if (!m.is(r1, "ai.onnx::Reshape")) continue;
    const auto& r1d = g.values[m.out(r1)].dims;
    if (r1d.size() != 2 || !r1d[1].isConst() || r1d[1].constValue() != e) continue;
    const int g2 = m.soleConsumer(m.out(r1));
    const auto proj2 = projectionOf(m, g2);
    if (!proj2 || g.nodes[g2].inputs[0] != m.out(r1)) continue;
    const int r2 = m.soleConsumer(m.out(g2));
    if (!m.is(r2, "ai.onnx::Reshape")) continue;
    const auto& r2d = g.values[m.out(r2)].dims;
    const auto& g2d = g.values[m.out(g2)].dims;
    if (r2d.size() != 3 || !r2d[0].sameAs(pd[0]) || !r2d[1].sameAs(pd[1]) ||
        !r2d[2].sameAs(g2d.back()))
      continue;
    const int t2 = m.soleConsumer(m.out(r2));
    if (!fusion::hasPerm(m, t2, {1, 0, 2})) continue;
    if (!sameGuards(g, {t1, g1, attn, r1, g2, r2, t2})) continue;
    // copies: Rewrite::add appends to g.nodes
    const Node an_c = an;
    const std::string n1_name = g.nodes[g1].name, n2_name = g.nodes[g2].name;
    const DimExpr n1_cols = pd[2], n2_cols = g2d.back();  // copies: new values move g.values
    const std::string r1_name = g.nodes[r1].name, tail = g.nodes[r2].name + "+" + g.nodes[t2].name;
    Rewrite rw(ctx, "mha_batch_first", an_c.guards);
    const int pb =
        rw.add("opforge::FusedMatMul", n1_name, proj1->attrs, gemmInputs(g, *proj1, x, n1_cols));
    AttrMap aa = an_c.attrs;
    aa.set("layout", std::string("bs3e"));
    const int yb = rw.add("opforge::FusedAttention", an_c.name, aa, {pb, pb, pb});
    const int merged = rw.add("ai.onnx::Reshape", r1_name, AttrMap{},
                              {yb, int64Constant(g, r1_name + ":bse", {0, 0, e})});
    rw.add("opforge::FusedMatMul", n2_name + "+" + tail, proj2->attrs,
           gemmInputs(g, *proj2, merged, n2_cols));
    if (!rw.commit(m, m.out(t2), {g1, attn, r1, t2}, {g1, attn, r1, g2, r2, t2})) continue;
    ++ctx.counters["batch-first attention transposes folded"];
  }
  return Status::ok();
}

// Reshape r: [B, S, E] -> [B, S, H, d] (H * d = E, all but B and S constant); its input.
int headSplitInput(const Matcher& m, int r, int64_t* heads, int64_t* d) {
  if (!m.is(r, "ai.onnx::Reshape")) return -1;
  const int x = m.graph().nodes[r].inputs[0];
  const auto& xd = m.graph().values[x].dims;
  const auto& yd = m.graph().values[m.out(r)].dims;
  if (xd.size() != 3 || yd.size() != 4 || !xd[0].sameAs(yd[0]) || !xd[1].sameAs(yd[1]) ||
      !xd[2].isConst() || !yd[2].isConst() || !yd[3].isConst() ||
      yd[2].constValue() * yd[3].constValue() != xd[2].constValue())
    return -1;
  *heads = yd[2].constValue();
  *d = yd[3].constValue();
  return x;
}

// The three projections' weights (and biases) side by side along N: one constant.
int concatN(Graph& g, const std::vector<int>& parts, bool rows, const std::string& name) {
  const TensorValue& first = *g.values[parts[0]].constant;
  const DataType t = first.desc.dtype;
  const size_t es = dtypeSize(t);
  auto out = std::make_shared<TensorValue>();
  out->desc = first.desc;
  std::vector<int64_t>& dims = out->desc.dims;
  const int axis = rows ? 0 : static_cast<int>(dims.size()) - 1;
  dims[axis] = 0;
  for (int v : parts) dims[axis] += g.values[v].constant->desc.dims[axis];
  out->data.resize(static_cast<size_t>(out->desc.numel()) * es);
  // rows (or a 1-D bias): the parts one after another; columns: row by row.
  const int64_t nrows = rows || dims.size() == 1 ? 1 : dims[0];
  size_t at = 0;
  for (int64_t r = 0; r < nrows; ++r)
    for (int v : parts) {
      const TensorValue& c = *g.values[v].constant;
      const size_t len = c.data.size() / static_cast<size_t>(nrows);
      std::memcpy(out->data.data() + at, c.data.data() + r * len, len);
      at += len;
    }
  Value val;
  val.name = g.uniqueValueName(name);
  val.dtype = t;
  for (int64_t d : dims) val.dims.emplace_back(d);
  val.constant = std::move(out);
  return g.addValue(std::move(val));
}

// The three FusedMatMuls behind Q, K and V (xs) if they share their input, transB, alpha and
// dtype, apply no activation, and have constant weights of one shape and constant biases or none.
std::optional<std::vector<int>> sharedInputProjections(const Matcher& m, const std::vector<int>& xs,
                                                       const std::vector<int>& readers) {
  const Graph& g = m.graph();
  std::vector<int> gs;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int n = m.producer(xs[i]);
    if (!isProjection(m, n) || m.soleConsumer(xs[i]) != readers[i]) return std::nullopt;
    const Node& node = g.nodes[n];
    if (node.attrs.get<std::string>("activation") != "none") return std::nullopt;
    gs.push_back(n);
  }
  const Node& n0 = g.nodes[gs[0]];
  const bool bias0 = n0.inputs.size() > 2 && n0.inputs[2] >= 0;
  for (int n : gs) {
    const Node& node = g.nodes[n];
    const bool bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
    if (node.inputs[0] != n0.inputs[0] || bias != bias0 ||
        node.attrs.get<int64_t>("transB") != n0.attrs.get<int64_t>("transB") ||
        node.attrs.get<double>("alpha") != n0.attrs.get<double>("alpha") ||
        g.values[node.inputs[1]].constant->desc != g.values[n0.inputs[1]].constant->desc ||
        (bias && g.values[node.inputs[2]].constant->desc != g.values[n0.inputs[2]].constant->desc))
      return std::nullopt;
  }
  if (gs[0] == gs[1] || gs[1] == gs[2] || gs[0] == gs[2]) return std::nullopt;
  return gs;
}

// Swin's (and timm's WindowAttention's) packed projection: P [X, N, 3C] -> Reshape [X, N, 3, H, d]
// -> Transpose(2, 0, 3, 1, 4) -> Gather(0 | 1 | 2, axis 0) = Q, K, V [X, H, N, d]; the attention's
// result [X, H, N, d] -> Transpose(0, 2, 1, 3). Returns P and the nodes read in place (the
// Reshape, the Transpose, the Gathers, the output Transpose last), or nullopt.
std::optional<std::pair<int, std::vector<int>>> windowQkv(const Matcher& m, int attn,
                                                          int64_t* heads) {
  const Graph& g = m.graph();
  const Node& an = g.nodes[attn];
  if (an.attrs.get<int64_t>("k_transposed") != 0 || g.values[an.inputs[0]].dims.size() != 4)
    return std::nullopt;
  std::vector<int> nodes;
  int t = -1;
  for (int i = 0; i < 3; ++i) {
    const int gi = m.producer(an.inputs[i]);
    if (!m.is(gi, "ai.onnx::Gather") || m.soleConsumer(an.inputs[i]) != attn ||
        g.nodes[gi].attrs.get<int64_t>("axis") != 0)
      return std::nullopt;
    const int idx = g.nodes[gi].inputs[1];
    const Value& iv = g.values[idx];
    if (!iv.constant || iv.constant->desc.rank() != 0 ||
        loadAsDouble(iv.constant->data.data(), iv.dtype, 0) != i)
      return std::nullopt;
    const int src = g.nodes[gi].inputs[0];
    if (i > 0 && m.producer(src) != t) return std::nullopt;
    t = m.producer(src);
    nodes.push_back(gi);
  }
  if (!fusion::hasPerm(m, t, {2, 0, 3, 1, 4}) || m.uses(m.out(t)).size() != 3 ||
      g.values[m.out(t)].is_output)
    return std::nullopt;
  const int r = m.producer(g.nodes[t].inputs[0]);
  if (!m.is(r, "ai.onnx::Reshape") || m.soleConsumer(m.out(r)) != t) return std::nullopt;
  const int p = g.nodes[r].inputs[0];
  const auto& pd = g.values[p].dims;             // [X, N, 3C]
  const auto& rd = g.values[m.out(r)].dims;      // [X, N, 3, H, d]
  const auto& qd = g.values[an.inputs[0]].dims;  // [X, H, N, d]
  if (pd.size() != 3 || rd.size() != 5 || !rd[0].sameAs(pd[0]) || !rd[1].sameAs(pd[1]) ||
      !rd[2].isConst() || rd[2].constValue() != 3 || !rd[3].isConst() || !rd[4].isConst() ||
      !pd[2].isConst() || pd[2].constValue() != 3 * rd[3].constValue() * rd[4].constValue() ||
      !qd[0].sameAs(pd[0]) || !qd[2].sameAs(pd[1]))
    return std::nullopt;
  const int back = m.soleConsumer(m.out(attn));
  if (!fusion::hasPerm(m, back, {0, 2, 1, 3})) return std::nullopt;
  nodes.insert(nodes.begin(), {r, t});
  nodes.push_back(back);
  *heads = rd[3].constValue();
  return std::pair{p, nodes};
}

Status packQkv(PassContext& ctx) {
  if (!ctx.constant_folding || !ctx.registry.find("opforge::FusedAttention")) return Status::ok();
  Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int attn = ctx.order[step];
    if (!m.is(attn, "opforge::FusedAttention")) continue;
    const std::string layout = g.nodes[attn].attrs.get<std::string>("layout");
    if (layout != "bshd" && layout != "bhsd") continue;
    const Node an = g.nodes[attn];  // a copy: Rewrite::add appends to g.nodes
    if (an.inputs.size() < 3) continue;
    if (layout == "bhsd") {
      int64_t heads = 0;
      const auto w = windowQkv(m, attn, &heads);
      if (!w) continue;
      std::vector<int> chain = w->second;
      chain.push_back(attn);
      if (!sameGuards(g, chain)) continue;
      Rewrite rw(ctx, "packed_qkv", an.guards);
      AttrMap aa = an.attrs;
      aa.set("layout", std::string("bs3e"));
      aa.set("heads", heads);
      std::vector<int> in{w->first, w->first, w->first};
      if (an.inputs.size() > 3 && an.inputs[3] >= 0) in.push_back(an.inputs[3]);
      rw.add("opforge::FusedAttention", an.name + "+" + g.nodes[chain[chain.size() - 2]].name, aa,
             in);
      if (!rw.commit(m, m.out(chain[chain.size() - 2]), {chain[chain.size() - 2]}, chain)) continue;
      ++ctx.counters["windowed Q/K/V read in place"];
      continue;
    }
    std::vector<int> rs, xs;
    int64_t heads = 0, d = 0;
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i) {
      const int r = m.producer(an.inputs[i]);
      int64_t h = 0, di = 0;
      const int x = m.soleConsumer(an.inputs[i]) == attn ? headSplitInput(m, r, &h, &di) : -1;
      ok = x >= 0 && (i == 0 || (h == heads && di == d && m.sameShape(x, xs[0])));
      heads = h, d = di;
      rs.push_back(r);
      xs.push_back(x);
    }
    if (!ok) continue;
    const int64_t e = heads * d;
    std::vector<int> chain = rs, dead = rs;
    int packed = -1, gemm_slot = -1;
    std::optional<std::vector<int>> gs;
    const int sp = m.producer(xs[0]);
    if (m.is(sp, "ai.onnx::Split")) {  // P [B, S, 3E] split into thirds along its last axis
      const Node& sn = g.nodes[sp];
      const int pv = sn.inputs[0];
      const auto& pd = g.values[pv].dims;
      if (sn.outputs.size() != 3 || pd.size() != 3 || !pd[2].isConst() ||
          pd[2].constValue() != 3 * e)
        continue;
      for (int i = 0; i < 3 && ok; ++i)
        ok = sn.outputs[i] == xs[i] && m.soleConsumer(xs[i]) == rs[i];
      if (!ok) continue;
      packed = pv;
      chain.push_back(sp);
      dead.push_back(sp);
    } else if ((gs = sharedInputProjections(m, xs, rs))) {
      chain.insert(chain.end(), gs->begin(), gs->end());
      dead.insert(dead.end(), gs->begin(), gs->end());
      gemm_slot = (*gs)[0];
      for (int k : ctx.order)  // the first of the three in execution order
        if (k == (*gs)[0] || k == (*gs)[1] || k == (*gs)[2]) {
          gemm_slot = k;
          break;
        }
    } else {
      continue;
    }
    chain.push_back(attn);
    dead.push_back(attn);
    if (!sameGuards(g, chain)) continue;
    Rewrite rw(ctx, "packed_qkv", an.guards);
    std::vector<int> slots;
    if (gs) {
      const Node n0 = g.nodes[(*gs)[0]];
      const bool rows = n0.attrs.get<int64_t>("transB") != 0;
      std::vector<int> ws, bs;
      std::string name;
      for (int n : *gs) {
        ws.push_back(g.nodes[n].inputs[1]);
        if (g.nodes[n].inputs.size() > 2 && g.nodes[n].inputs[2] >= 0)
          bs.push_back(g.nodes[n].inputs[2]);
        name += (name.empty() ? "" : "+") + g.nodes[n].name;
      }
      std::vector<int> in{n0.inputs[0], concatN(g, ws, rows, name + ":weights")};
      if (!bs.empty()) in.push_back(concatN(g, bs, false, name + ":bias"));
      packed = rw.add("opforge::FusedMatMul", name, n0.attrs, in);
      slots.push_back(gemm_slot);
    }
    AttrMap aa = an.attrs;
    aa.set("layout", std::string("bs3e"));
    aa.set("heads", heads);
    std::vector<int> in{packed, packed, packed};
    if (an.inputs.size() > 3 && an.inputs[3] >= 0) in.push_back(an.inputs[3]);
    rw.add("opforge::FusedAttention", an.name, aa, in);
    slots.push_back(attn);
    if (!rw.commit(m, m.out(attn), slots, dead)) continue;
    ++ctx.counters[gs ? "Q/K/V projections merged into one GEMM" : "Q/K/V split read in place"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(mha_batch_first, 276, foldBatchFirst);  // after mha_fusion (275)
OPFORGE_GRAPH_PASS(packed_qkv, 862, packQkv);              // after attention_heads (860)

}  // namespace opforge::graph
