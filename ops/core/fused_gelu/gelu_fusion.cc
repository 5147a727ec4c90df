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
#include "graph/passes/fusion_util.h"
#include "opforge/epilogue.h"

namespace opforge::graph {
namespace {

constexpr const char* kFusedKey = "opforge::FusedGeluChain";

class GeluFusion {
 public:
  GeluFusion(PassContext& ctx, const RegisteredOp* fused)
      : ctx_(ctx), m_(ctx), g_(ctx.g), fused_(fused) {}

  Status run() {
    // Pass 1: patterns -> FusedGeluChain. Anchors are the Gelu, Erf and Tanh nodes.
    for (size_t k = 0; k < ctx_.order.size(); ++k) {
      const int n = ctx_.order[k];
      if (g_.nodes[n].dead) continue;
      std::optional<Match> m;
      if (m_.is(n, "ai.onnx::Gelu"))
        m = matchOnnxGelu(n);
      else if (m_.is(n, "ai.onnx::Erf"))
        m = matchErfForm(n);
      else if (m_.is(n, "ai.onnx::Tanh"))
        m = matchTanhForm(n);
      if (!m) continue;
      OPFORGE_RETURN_IF_ERROR(replace(*m).status());
      ++ctx_.counters["GELU patterns fused"];
    }
    // Pass 2: chains. A FusedGeluChain node absorbs its single elementwise consumer, repeatedly.
    for (size_t k = 0; k < ctx_.order.size(); ++k) {
      int n = ctx_.order[k];
      if (g_.nodes[n].dead || g_.nodes[n].op != fused_) continue;
      for (;;) {
        std::optional<Match> m = matchChainStep(n);
        if (!m) break;
        OPFORGE_ASSIGN_OR_RETURN(n, replace(*m));
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
  fusion::Matcher m_;  // live consumers, producers, shapes, replacing (fusion_util.h)
  Graph& g_;
  const RegisteredOp* fused_;

  // The value of a one-element numeric constant (an initializer, a folded constant, or a live
  // Constant node when folding is off).
  std::optional<double> scalar(int v) const {
    if (v < 0) return std::nullopt;
    const Value& val = g_.values[v];
    const TensorValue* t = val.constant.get();
    if (!t) {
      const int p = m_.producer(v);
      if (p < 0 || !m_.is(p, "ai.onnx::Constant")) return std::nullopt;
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

  std::optional<Match> matchOnnxGelu(int n) const {
    Match m;
    m.nodes = {n};
    m.last = n;
    m.x = g_.nodes[n].inputs[0];
    m.approximate = g_.nodes[n].attrs.get<std::string>("approximate");
    if (m.approximate != "none" && m.approximate != "tanh") return std::nullopt;
    if (!m_.isFloat(m.x) || !m_.sameShape(m_.out(n), m.x)) return std::nullopt;
    return m;
  }

  // The tail 0.5 * x * a, where `a` = 1 + erf(...) or 1 + tanh(...) is the output of node `add`.
  // Appends the tail's nodes and sets m.last.
  bool matchTail(int a, int x, Match& m) const {
    const int m1 = m_.soleConsumer(a);
    if (!m_.is(m1, "ai.onnx::Mul")) return false;
    const int o = otherOperand(m1, a);
    if (o < 0) return false;
    if (o == x || near(o, 0.5)) {  // Mul(x, a) or Mul(a, 0.5), then Mul(., 0.5) or Mul(., x)
      const int m2 = m_.soleConsumer(m_.out(m1));
      if (!m_.is(m2, "ai.onnx::Mul")) return false;
      const int o2 = otherOperand(m2, m_.out(m1));
      if (o2 < 0 || !(o == x ? near(o2, 0.5) : o2 == x)) return false;
      m.nodes.insert(m.nodes.end(), {m1, m2});
      m.last = m2;
      return true;
    }
    const int h = m_.producer(o);  // Mul(Mul(x, 0.5), a)
    if (!m_.is(h, "ai.onnx::Mul") || m_.soleConsumer(o) != m1 || withConstant(h, 0.5) != x)
      return false;
    m.nodes.insert(m.nodes.end(), {h, m1});
    m.last = m1;
    return true;
  }

  bool allShapesOk(const Match& m) const {
    if (!m_.isFloat(m.x)) return false;
    for (int n : m.nodes)
      if (!m_.sameShape(m_.out(n), m.x)) return false;
    return true;
  }

  std::optional<Match> matchErfForm(int erf) const {
    Match m;
    const int d = g_.nodes[erf].inputs[0];
    const int scale = m_.producer(d);
    if (m_.soleConsumer(d) != erf) return std::nullopt;
    if (m_.is(scale, "ai.onnx::Div")) {
      if (!near(g_.nodes[scale].inputs[1], std::sqrt(2.0))) return std::nullopt;
      m.x = g_.nodes[scale].inputs[0];
    } else if (m_.is(scale, "ai.onnx::Mul")) {
      m.x = withConstant(scale, 1.0 / std::sqrt(2.0));
    } else {
      return std::nullopt;
    }
    if (m.x < 0) return std::nullopt;
    const int add = m_.soleConsumer(m_.out(erf));
    if (!m_.is(add, "ai.onnx::Add") || withConstant(add, 1.0) != m_.out(erf)) return std::nullopt;
    m.nodes = {scale, erf, add};
    if (!matchTail(m_.out(add), m.x, m) || !allShapesOk(m)) return std::nullopt;
    return m;
  }

  // cube == x^3 for some x: returns x and appends the nodes computing it.
  int matchCube(int cube, std::vector<int>& nodes) const {
    const int p = m_.producer(cube);
    if (m_.is(p, "ai.onnx::Pow")) {
      if (!near(g_.nodes[p].inputs[1], 3.0)) return -1;
      nodes.push_back(p);
      return g_.nodes[p].inputs[0];
    }
    if (!m_.is(p, "ai.onnx::Mul")) return -1;
    const auto& in = g_.nodes[p].inputs;
    for (int side = 0; side < 2; ++side) {  // Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)
      const int sq = m_.producer(in[1 - side]);
      if (!m_.is(sq, "ai.onnx::Mul") || m_.soleConsumer(in[1 - side]) != p) continue;
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
    const int beta = m_.producer(t_in);
    if (!m_.is(beta, "ai.onnx::Mul") || m_.soleConsumer(t_in) != tanh) return std::nullopt;
    const int s = withConstant(beta, kGeluSqrt2OverPi);
    const int sum = m_.producer(s);
    if (!m_.is(sum, "ai.onnx::Add") || m_.soleConsumer(s) != beta) return std::nullopt;
    std::vector<int> front;
    for (int side = 0; side < 2 && m.x < 0; ++side) {
      const int k = g_.nodes[sum].inputs[1 - side];
      const int kap = m_.producer(k);
      if (!m_.is(kap, "ai.onnx::Mul") || m_.soleConsumer(k) != sum) continue;
      const int cube = withConstant(kap, kGeluKappa);
      if (cube < 0 || m_.soleConsumer(cube) != kap) continue;
      std::vector<int> nodes;
      const int x = matchCube(cube, nodes);
      if (x < 0 || x != g_.nodes[sum].inputs[side]) continue;
      m.x = x;
      front = nodes;
      front.insert(front.end(), {kap, sum, beta, tanh});
    }
    if (m.x < 0) return std::nullopt;
    const int add = m_.soleConsumer(m_.out(tanh));
    if (!m_.is(add, "ai.onnx::Add") || withConstant(add, 1.0) != m_.out(tanh)) return std::nullopt;
    m.nodes = front;
    m.nodes.push_back(add);
    m.approximate = "tanh";
    if (!matchTail(m_.out(add), m.x, m) || !allShapesOk(m)) return std::nullopt;
    return m;
  }

  // One elementwise consumer of FusedGeluChain node n folded into its chain.
  std::optional<Match> matchChainStep(int n) const {
    const Node& f = g_.nodes[n];
    const int y = m_.out(n);
    const int c = m_.soleConsumer(y);
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
    if (!m_.sameShape(m_.out(c), m.x)) return std::nullopt;
    m.chain.insert(m.chain.end(), codes.begin(), codes.end());
    m.scalars.insert(m.scalars.end(), vals.begin(), vals.end());
    m.nodes = {n, c};
    m.last = c;
    return m;
  }

  // The FusedGeluChain node for `m` in place of its nodes (fusion::Matcher::replace: it takes
  // m.last's output value and place in the execution order). Returns the new node.
  Result<int> replace(const Match& m) {
    AttrMap attrs;
    attrs.set("approximate", m.approximate);
    attrs.set("chain", m.chain);
    attrs.set("chain_scalars", m.chain.empty() ? std::vector<float>{} : m.scalars);
    return m_.replace(fused_, attrs, {m.x}, m.nodes, m.last, "gelu_fusion");
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
