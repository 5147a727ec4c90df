// gelu_fusion: replaces GELU subgraphs by one opforge::FusedGeluChain node (one pass over memory),
// the engine's own op (beside this file, built into libopforge): plain ONNX graphs are fused with
// no op library loaded. The chain's stage codes are the engine's epilogue vocabulary
// (opforge/epilogue.h).
//
// Recognized, with every Add/Mul's operands in either order and constants compared by value:
//   ai.onnx::Gelu (approximate "none" or "tanh");
//   the erf form PyTorch exports:  Div(x, sqrt2) | Mul(x, 1/sqrt2) -> Erf -> Add(1) -> then
//                                  0.5 * x * (.) as Mul(Mul(x, .), 0.5), Mul(Mul(., 0.5), x) or
//                                  Mul(Mul(x, 0.5), .);
//   the tanh form:                 x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x) ->
//                                  Mul(0.044715) -> Add(x) -> Mul(sqrt(2/pi)) -> Tanh -> Add(1) ->
//                                  the same 0.5 * x * (.) tail.
// Every intermediate value must feed only the pattern (not a network output), and every node must
// keep x's shape and type (a constant of higher rank would broadcast).
// Then a FusedGeluChain node absorbs the elementwise ops that follow it — another one (the seed's
// GELU(GELU(x))), Gelu, Relu, Tanh, Sigmoid, and Mul/Add/Div/Sub by a scalar constant — into its
// `chain` attribute, so the whole chain runs in one pass. A fused node is named after the nodes
// it replaces, joined with '+'. Runs only with constant folding on
// (BuilderConfig::constant_folding, the optimization switch), as the other fusions.
#include <cmath>

#include "graph/passes.h"
#include "opforge/epilogue.h"

namespace opforge::graph {
namespace {

constexpr const char* kFusedKey = "opforge::FusedGeluChain";

class GeluFusion {
 public:
  GeluFusion(PassContext& ctx, const RegisteredOp* fused) : ctx_(ctx), g_(ctx.g), fused_(fused) {}

  Status run() {
    // Pass 1: patterns -> FusedGeluChain. Anchors are the Gelu, Erf and Tanh nodes.
    rebuildUses();
    for (size_t k = 0; k < ctx_.order.size(); ++k) {
      const int n = ctx_.order[k];
      if (g_.nodes[n].dead) continue;
      std::optional<Match> m;
      if (is(n, "ai.onnx::Gelu"))
        m = matchOnnxGelu(n);
      else if (is(n, "ai.onnx::Erf"))
        m = matchErfForm(n);
      else if (is(n, "ai.onnx::Tanh"))
        m = matchTanhForm(n);
      if (!m) continue;
      OPFORGE_RETURN_IF_ERROR(replace(*m).status());
      rebuildUses();
      ++ctx_.counters["GELU patterns fused"];
    }
    // Pass 2: chains. A FusedGeluChain node absorbs its single elementwise consumer, repeatedly.
    rebuildUses();
    for (size_t k = 0; k < ctx_.order.size(); ++k) {
      int n = ctx_.order[k];
      if (g_.nodes[n].dead || g_.nodes[n].op != fused_) continue;
      for (;;) {
        std::optional<Match> m = matchChainStep(n);
        if (!m) break;
        OPFORGE_ASSIGN_OR_RETURN(n, replace(*m));
        rebuildUses();
        ++ctx_.counters["elementwise ops fused into GELU chains"];
      }
    }
    return Status::ok();
  }

 private:
  struct Match {
    std::vector<int> nodes;  // every node replaced
    int last = -1;           // the node whose output the fused node produces
    int x = -1;              // the fused node's input
    std::string approximate = "none";
    std::vector<int32_t> chain;
    std::vector<float> scalars;
  };

  PassContext& ctx_;
  Graph& g_;
  const RegisteredOp* fused_;
  std::vector<std::vector<int>> uses_;  // value -> live consumer nodes

  bool is(int n, const char* key) const {
    return n >= 0 && !g_.nodes[n].dead && g_.nodes[n].op->key() == key;
  }

  void rebuildUses() {
    uses_.assign(g_.values.size(), {});
    for (int n : ctx_.order) {
      if (g_.nodes[n].dead) continue;
      for (int v : g_.nodes[n].inputs)
        if (v >= 0) uses_[v].push_back(n);
    }
  }

  // The node producing v, if live.
  int producer(int v) const {
    if (v < 0 || g_.values[v].constant) return -1;
    const int p = g_.values[v].producer;
    return p >= 0 && !g_.nodes[p].dead ? p : -1;
  }

  // v is read by exactly one node (which one: `consumer`) and is not a network output.
  bool onlyFeeds(int v, int* consumer) const {
    if (v < 0 || g_.values[v].is_output || uses_[v].size() != 1) return false;
    *consumer = uses_[v][0];
    return true;
  }
  int soleConsumer(int v) const {
    int c = -1;
    return onlyFeeds(v, &c) ? c : -1;
  }

  // The value of a one-element numeric constant (an initializer, a folded constant, or a live
  // Constant node when folding is off).
  std::optional<double> scalar(int v) const {
    if (v < 0) return std::nullopt;
    const Value& val = g_.values[v];
    const TensorValue* t = val.constant.get();
    if (!t) {
      const int p = producer(v);
      if (p < 0 || !is(p, "ai.onnx::Constant")) return std::nullopt;
      const AttrValue* a = g_.nodes[p].attrs.find("value");
      if (a) t = std::get_if<TensorValue>(a);
      if (!t) {
        const AttrValue* f = g_.nodes[p].attrs.find("value_float");
        if (f && std::holds_alternative<double>(*f)) return std::get<double>(*f);
        return std::nullopt;
      }
    }
    if (t->desc.numel() != 1 || dtypeSize(t->desc.dtype) == 0) return std::nullopt;
    return loadAsDouble(t->data.data(), t->desc.dtype, 0);
  }

  // c equals `want` up to the rounding of its own type (at least 1e-4 relative).
  bool near(int v, double want) const {
    auto c = scalar(v);
    if (!c) return false;
    const DataType t =
        g_.values[v].constant ? g_.values[v].constant->desc.dtype : g_.values[v].dtype;
    const double eps = t == DataType::kFloat16    ? 0x1p-10
                       : t == DataType::kBFloat16 ? 0x1p-7
                                                  : 0x1p-23;
    return std::fabs(*c - want) <= std::max(1e-4, 4 * eps) * std::fabs(want);
  }

  // Binary node n is op(a, b) with {a, b} = {value `v`, something}; returns the other operand.
  int otherOperand(int n, int v) const {
    const auto& in = g_.nodes[n].inputs;
    if (in.size() != 2) return -1;
    if (in[0] == v) return in[1];
    if (in[1] == v) return in[0];
    return -1;
  }
  // Commutative binary node n has a constant operand near `want`: returns the other operand.
  int withConstant(int n, double want) const {
    const auto& in = g_.nodes[n].inputs;
    if (in.size() != 2) return -1;
    if (near(in[1], want)) return in[0];
    if (near(in[0], want)) return in[1];
    return -1;
  }

  bool sameShapeAs(int v, int x) const {
    const Value &a = g_.values[v], &b = g_.values[x];
    if (a.dtype != b.dtype || a.dims.size() != b.dims.size()) return false;
    for (size_t d = 0; d < a.dims.size(); ++d)
      if (!a.dims[d].sameAs(b.dims[d])) return false;
    return true;
  }
  bool typeOk(int x) const {
    const DataType t = g_.values[x].dtype;
    return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
           t == DataType::kFloat64;
  }
  int out(int n) const { return g_.nodes[n].outputs.empty() ? -1 : g_.nodes[n].outputs[0]; }

  std::optional<Match> matchOnnxGelu(int n) const {
    Match m;
    m.nodes = {n};
    m.last = n;
    m.x = g_.nodes[n].inputs[0];
    m.approximate = g_.nodes[n].attrs.get<std::string>("approximate");
    if (m.approximate != "none" && m.approximate != "tanh") return std::nullopt;
    if (!typeOk(m.x) || !sameShapeAs(out(n), m.x)) return std::nullopt;
    return m;
  }

  // The tail 0.5 * x * a, where `a` = 1 + erf(...) or 1 + tanh(...) is the output of node `add`.
  // Appends the tail's nodes and sets m.last.
  bool matchTail(int a, int x, Match& m) const {
    const int m1 = soleConsumer(a);
    if (!is(m1, "ai.onnx::Mul")) return false;
    const int o = otherOperand(m1, a);
    if (o < 0) return false;
    if (o == x || near(o, 0.5)) {  // Mul(x, a) or Mul(a, 0.5), then Mul(., 0.5) or Mul(., x)
      const int m2 = soleConsumer(out(m1));
      if (!is(m2, "ai.onnx::Mul")) return false;
      const int o2 = otherOperand(m2, out(m1));
      if (o2 < 0 || !(o == x ? near(o2, 0.5) : o2 == x)) return false;
      m.nodes.insert(m.nodes.end(), {m1, m2});
      m.last = m2;
      return true;
    }
    const int h = producer(o);  // Mul(Mul(x, 0.5), a)
    if (!is(h, "ai.onnx::Mul") || soleConsumer(o) != m1 || withConstant(h, 0.5) != x) return false;
    m.nodes.insert(m.nodes.end(), {h, m1});
    m.last = m1;
    return true;
  }

  bool allShapesOk(const Match& m) const {
    if (!typeOk(m.x)) return false;
    for (int n : m.nodes)
      if (!sameShapeAs(out(n), m.x)) return false;
    return true;
  }

  std::optional<Match> matchErfForm(int erf) const {
    Match m;
    const int d = g_.nodes[erf].inputs[0];
    const int scale = producer(d);
    if (soleConsumer(d) != erf) return std::nullopt;
    if (is(scale, "ai.onnx::Div")) {
      if (!near(g_.nodes[scale].inputs[1], std::sqrt(2.0))) return std::nullopt;
      m.x = g_.nodes[scale].inputs[0];
    } else if (is(scale, "ai.onnx::Mul")) {
      m.x = withConstant(scale, 1.0 / std::sqrt(2.0));
    } else {
      return std::nullopt;
    }
    if (m.x < 0) return std::nullopt;
    const int add = soleConsumer(out(erf));
    if (!is(add, "ai.onnx::Add") || withConstant(add, 1.0) != out(erf)) return std::nullopt;
    m.nodes = {scale, erf, add};
    if (!matchTail(out(add), m.x, m) || !allShapesOk(m)) return std::nullopt;
    return m;
  }

  // cube == x^3 for some x: returns x and appends the nodes computing it.
  int matchCube(int cube, std::vector<int>& nodes) const {
    const int p = producer(cube);
    if (is(p, "ai.onnx::Pow")) {
      if (!near(g_.nodes[p].inputs[1], 3.0)) return -1;
      nodes.push_back(p);
      return g_.nodes[p].inputs[0];
    }
    if (!is(p, "ai.onnx::Mul")) return -1;
    const auto& in = g_.nodes[p].inputs;
    for (int side = 0; side < 2; ++side) {  // Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)
      const int sq = producer(in[1 - side]);
      if (!is(sq, "ai.onnx::Mul") || soleConsumer(in[1 - side]) != p) continue;
      const auto& sin = g_.nodes[sq].inputs;
      if (sin[0] == in[side] && sin[1] == in[side]) {
        nodes.insert(nodes.end(), {sq, p});
        return in[side];
      }
    }
    return -1;
  }

  std::optional<Match> matchTanhForm(int tanh) const {
    Match m;
    const int t_in = g_.nodes[tanh].inputs[0];
    const int beta = producer(t_in);
    if (!is(beta, "ai.onnx::Mul") || soleConsumer(t_in) != tanh) return std::nullopt;
    const int s = withConstant(beta, kGeluSqrt2OverPi);
    const int sum = producer(s);
    if (!is(sum, "ai.onnx::Add") || soleConsumer(s) != beta) return std::nullopt;
    std::vector<int> front;
    for (int side = 0; side < 2 && m.x < 0; ++side) {
      const int k = g_.nodes[sum].inputs[1 - side];
      const int kap = producer(k);
      if (!is(kap, "ai.onnx::Mul") || soleConsumer(k) != sum) continue;
      const int cube = withConstant(kap, kGeluKappa);
      if (cube < 0 || soleConsumer(cube) != kap) continue;
      std::vector<int> nodes;
      const int x = matchCube(cube, nodes);
      if (x < 0 || x != g_.nodes[sum].inputs[side]) continue;
      m.x = x;
      front = nodes;
      front.insert(front.end(), {kap, sum, beta, tanh});
    }
    if (m.x < 0) return std::nullopt;
    const int add = soleConsumer(out(tanh));
    if (!is(add, "ai.onnx::Add") || withConstant(add, 1.0) != out(tanh)) return std::nullopt;
    m.nodes = front;
    m.nodes.push_back(add);
    m.approximate = "tanh";
    if (!matchTail(out(add), m.x, m) || !allShapesOk(m)) return std::nullopt;
    return m;
  }

  // One elementwise consumer of FusedGeluChain node n folded into its chain.
  std::optional<Match> matchChainStep(int n) const {
    const Node& f = g_.nodes[n];
    const int y = out(n);
    const int c = soleConsumer(y);
    if (c < 0 || g_.nodes[c].dead) return std::nullopt;
    Match m;
    m.x = f.inputs[0];
    m.approximate = f.attrs.get<std::string>("approximate");
    m.chain = f.attrs.get<std::vector<int32_t>>("chain");
    m.scalars = f.attrs.get<std::vector<float>>("chain_scalars");
    m.scalars.resize(m.chain.size(), 0.f);
    std::vector<int32_t> codes;
    std::vector<float> vals;
    const Node& cn = g_.nodes[c];
    const std::string key = cn.op->key();
    if (cn.op == fused_) {
      codes.push_back(cn.attrs.get<std::string>("approximate") == "tanh" ? kEpilogueGeluTanh
                                                                         : kEpilogueGelu);
      vals.push_back(0.f);
      auto more = cn.attrs.get<std::vector<int32_t>>("chain");
      auto ms = cn.attrs.get<std::vector<float>>("chain_scalars");
      ms.resize(more.size(), 0.f);
      codes.insert(codes.end(), more.begin(), more.end());
      vals.insert(vals.end(), ms.begin(), ms.end());
    } else if (key == "ai.onnx::Gelu") {
      const auto a = cn.attrs.get<std::string>("approximate");
      if (a != "none" && a != "tanh") return std::nullopt;
      codes.push_back(a == "tanh" ? kEpilogueGeluTanh : kEpilogueGelu);
    } else if (key == "ai.onnx::Relu") {
      codes.push_back(kEpilogueRelu);
    } else if (key == "ai.onnx::Tanh") {
      codes.push_back(kEpilogueTanh);
    } else if (key == "ai.onnx::Sigmoid") {
      codes.push_back(kEpilogueSigmoid);
    } else if (key == "ai.onnx::Mul" || key == "ai.onnx::Add" || key == "ai.onnx::Div" ||
               key == "ai.onnx::Sub") {
      const auto& in = cn.inputs;
      if (in.size() != 2) return std::nullopt;
      const bool commutative = key == "ai.onnx::Mul" || key == "ai.onnx::Add";
      int other = -1;
      if (in[0] == y && in[1] != y)
        other = in[1];
      else if (commutative && in[1] == y && in[0] != y)
        other = in[0];
      auto v = scalar(other);
      if (!v || !std::isfinite(*v) || (key == "ai.onnx::Div" && *v == 0)) return std::nullopt;
      const double c2 = key == "ai.onnx::Sub" ? -*v : *v;
      if (static_cast<double>(static_cast<float>(c2)) != c2 &&
          g_.values[y].dtype == DataType::kFloat64)
        return std::nullopt;  // the chain keeps fp32 operands; an fp64 graph's constant must fit
                              // exactly
      codes.push_back(key == "ai.onnx::Mul"   ? kEpilogueMul
                      : key == "ai.onnx::Div" ? kEpilogueDiv
                                              : kEpilogueAdd);
      vals.push_back(static_cast<float>(c2));
    } else {
      return std::nullopt;
    }
    vals.resize(codes.size(), 0.f);
    if (static_cast<int>(m.chain.size() + codes.size()) + 1 > kMaxEpilogueStages)
      return std::nullopt;
    if (!sameShapeAs(out(c), m.x)) return std::nullopt;
    m.chain.insert(m.chain.end(), codes.begin(), codes.end());
    m.scalars.insert(m.scalars.end(), vals.begin(), vals.end());
    m.nodes = {n, c};
    m.last = c;
    return m;
  }

  // Adds the FusedGeluChain node for `m`, gives it the output value of m.last, puts it where m.last
  // was in the execution order and marks the matched nodes dead. Returns the new node.
  Result<int> replace(const Match& m) {
    std::string name;
    for (int k : ctx_.order)
      for (int n : m.nodes)
        if (k == n) name += (name.empty() ? "" : "+") + g_.nodes[n].name;
    AttrMap attrs;
    attrs.set("approximate", m.approximate);
    attrs.set("chain", m.chain);
    attrs.set("chain_scalars", m.chain.empty() ? std::vector<float>{} : m.scalars);
    const int y = out(m.last);
    OPFORGE_ASSIGN_OR_RETURN(int nn, addNode(g_, fused_, name, attrs, {m.x}, {}, false));
    const int fresh = g_.nodes[nn].outputs[0];
    g_.nodes[nn].outputs[0] = y;
    g_.values[y].producer = nn;
    g_.values[y].producer_output = 0;
    g_.values[fresh].producer = -1;
    g_.values[fresh].producer_output = -1;
    for (int n : m.nodes) g_.nodes[n].dead = true;
    for (int& k : ctx_.order)
      if (k == m.last) k = nn;
    if (ctx_.log) ctx_.log("gelu_fusion: " + name + " -> " + kFusedKey);
    return nn;
  }
};

Status fuseGelu(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();  // the builder's optimization switch
  const RegisteredOp* fused = ctx.registry.find(kFusedKey);
  if (!fused) return Status::ok();  // a registry without the built-in ops: nothing to fuse into
  return GeluFusion(ctx, fused).run();
}

}  // namespace

OPFORGE_GRAPH_PASS(gelu_fusion, 210, fuseGelu);  // after batchnorm_into_conv (200)

}  // namespace opforge::graph
