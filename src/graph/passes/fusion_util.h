// fusion_util.h — what the fusion passes share (conv_fusion, gemm_fusion, attention_fusion,
// mha_fusion, add_layernorm_fusion; they live beside the ops they make, ops/core/*): live consumers
// of each value, one-element constants, shape comparisons, replacing a matched chain by one node,
// the activation a node applies (opforge/epilogue.h's names) and the exported erf GELU pattern.
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/passes.h"

namespace opforge::graph::fusion {

class Matcher {
 public:
  explicit Matcher(PassContext& ctx) : ctx_(ctx), g_(ctx.g) {}

  // Consumers are the live nodes that reach a network output (a shape computation whose result
  // became a constant does not count, although dead_nodes removes it only later). They are
  // recomputed (one walk of the graph) when next asked for after the graph changed: a pass that
  // replaces thousands of nodes without asking (slice_constant_params on an unrolled loop) stays
  // linear.
  void rebuild() { stale_ = true; }

  Graph& graph() { return g_; }
  const Graph& graph() const { return g_; }
  bool is(int n, const char* key) const {
    return n >= 0 && !g_.nodes[n].dead && g_.nodes[n].op->key() == key;
  }
  int out(int n) const { return g_.nodes[n].outputs.empty() ? -1 : g_.nodes[n].outputs[0]; }
  const std::vector<int>& uses(int v) const {
    refresh();
    return uses_[v];
  }

  // The live node producing v (not a constant).
  int producer(int v) const {
    if (v < 0 || g_.values[v].constant) return -1;
    const int p = g_.values[v].producer;
    return p >= 0 && !g_.nodes[p].dead ? p : -1;
  }
  // v feeds exactly one live node and is not a network output: that node, else -1.
  int soleConsumer(int v) const {
    if (v < 0 || g_.values[v].is_output) return -1;
    refresh();
    if (uses_[v].size() != 1) return -1;
    return uses_[v][0];
  }
  // The value of a one-element numeric constant.
  std::optional<double> scalar(int v) const {
    if (v < 0 || !g_.values[v].constant) return std::nullopt;
    const TensorValue& t = *g_.values[v].constant;
    if (t.desc.numel() != 1 || dtypeSize(t.desc.dtype) == 0) return std::nullopt;
    return loadAsDouble(t.data.data(), t.desc.dtype, 0);
  }
  bool near(int v, double want) const {
    auto c = scalar(v);
    if (!c) return false;
    return std::fabs(*c - want) <= 1e-3 * std::fabs(want);  // FP16 constants round at 1e-3
  }
  // Commutative binary node n with operand v: the other operand (-1 if v is not an operand or
  // both are v).
  int other(int n, int v) const {
    const auto& in = g_.nodes[n].inputs;
    if (in.size() != 2) return -1;
    if (in[0] == v && in[1] != v) return in[1];
    if (in[1] == v && in[0] != v) return in[0];
    return -1;
  }
  bool sameShape(int a, int b) const {
    const Value &x = g_.values[a], &y = g_.values[b];
    if (x.dtype != y.dtype || x.dims.size() != y.dims.size()) return false;
    for (size_t d = 0; d < x.dims.size(); ++d)
      if (!x.dims[d].sameAs(y.dims[d])) return false;
    return true;
  }
  bool isFloat(int v) const {
    const DataType t = g_.values[v].dtype;
    return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
           t == DataType::kFloat64;
  }

  // replace(), but a node the op's shape rule refuses leaves the graph as it was (logged).
  bool tryReplace(const RegisteredOp* op, const AttrMap& attrs, const std::vector<int>& inputs,
                  const std::vector<int>& nodes, int last, const char* pass) {
    auto r = replace(op, attrs, inputs, nodes, last, pass);
    if (!r && ctx_.log)
      ctx_.log(std::string("warning: ") + pass + ": not fused: " + r.status().message());
    return r.isOk();
  }

  // Adds a node of `op` over `inputs` that produces the output value of `last`, takes `last`'s
  // place in the execution order and marks `nodes` dead. The name joins the replaced nodes' names
  // in execution order with '+'.
  Result<int> replace(const RegisteredOp* op, const AttrMap& attrs, const std::vector<int>& inputs,
                      const std::vector<int>& nodes, int last, const char* pass) {
    std::string name;
    for (int k : ctx_.order)
      for (int n : nodes)
        if (k == n) name += (name.empty() ? "" : "+") + g_.nodes[n].name;
    const int y = out(last);
    OPFORGE_ASSIGN_OR_RETURN(int nn, addNode(g_, op, name, attrs, inputs, {}, false));
    g_.nodes[nn].guards = g_.nodes[last].guards;  // in the If branch `last` was in, if any
    takeOutput(nn, y);
    for (int n : nodes) g_.nodes[n].dead = true;
    for (int& k : ctx_.order)
      if (k == last) k = nn;
    if (ctx_.log) ctx_.log(std::string(pass) + ": " + name + " -> " + op->key());
    rebuild();
    return nn;
  }

  // New node nn writes value y (the output of a node it replaces) instead of its own first output,
  // which is left without a producer.
  void takeOutput(int nn, int y) {
    const int fresh = g_.nodes[nn].outputs[0];
    g_.nodes[nn].outputs[0] = y;
    g_.values[y].producer = nn;
    g_.values[y].producer_output = 0;
    g_.values[fresh].producer = -1;
    g_.values[fresh].producer_output = -1;
  }

  // Drops node n, a no-op (its caller has shown that its one output equals its input `through`):
  // every reader of the output, and every guard on it, reads that input instead. Refused (false,
  // the graph unchanged) when the output is a network output (its name must stay), the input is
  // not a value, or the two differ in type, layout or shape.
  bool bypass(int n, const char* pass, size_t through = 0) {
    Node& node = g_.nodes[n];
    if (node.dead || node.inputs.size() <= through || node.inputs[through] < 0 ||
        node.outputs.size() != 1)
      return false;
    const int x = node.inputs[through], y = node.outputs[0];
    if (g_.values[y].is_output || g_.values[x].format != g_.values[y].format || !sameShape(x, y))
      return false;
    for (Node& other : g_.nodes) {
      for (int& v : other.inputs)
        if (v == y) v = x;
      for (Guard& gd : other.guards)
        if (gd.cond == y) gd.cond = x;
    }
    node.dead = true;
    if (ctx_.log) ctx_.log(std::string(pass) + ": " + node.name + " dropped (a no-op)");
    rebuild();
    return true;
  }

 private:
  void refresh() const {
    if (!stale_) return;
    std::vector<bool> needed_value(g_.values.size(), false), needed_node(g_.nodes.size(), false);
    for (int v : g_.outputs) needed_value[v] = true;
    for (auto it = ctx_.order.rbegin(); it != ctx_.order.rend(); ++it) {
      const Node& node = g_.nodes[*it];
      if (node.dead) continue;
      for (int v : node.outputs) needed_node[*it] = needed_node[*it] || needed_value[v];
      if (!needed_node[*it]) continue;
      for (int v : node.inputs)
        if (v >= 0) needed_value[v] = true;
    }
    uses_.assign(g_.values.size(), {});
    for (int n : ctx_.order) {
      if (g_.nodes[n].dead || !needed_node[n]) continue;
      for (int v : g_.nodes[n].inputs)
        if (v >= 0) uses_[v].push_back(n);
    }
    stale_ = false;
  }

  PassContext& ctx_;
  Graph& g_;
  mutable std::vector<std::vector<int>> uses_;
  mutable bool stale_ = true;
};

// A constant [1, ..., 1, N] (or [N]) as a constant [N]; -1 when v is not such a constant.
inline int rowBias(Graph& g, int v, const DimExpr& n) {
  if (v < 0 || !g.values[v].constant || !n.isConst()) return -1;
  const TensorValue& t = *g.values[v].constant;
  if (t.desc.rank() < 1 || t.desc.dims.back() != n.constValue() || t.desc.numel() != n.constValue())
    return -1;
  if (t.desc.rank() == 1) return v;
  auto flat = std::make_shared<TensorValue>(t);
  flat->desc.dims = {n.constValue()};
  Value val;
  val.name = g.uniqueValueName(g.values[v].name + ":row");
  val.dtype = t.desc.dtype;
  val.dims = {n};
  val.constant = std::move(flat);
  return g.addValue(std::move(val));
}

// Whether node n is a Transpose with permutation `want`.
inline bool hasPerm(const Matcher& m, int n, const std::vector<int64_t>& want) {
  if (!m.is(n, "ai.onnx::Transpose")) return false;
  const AttrValue* p = m.graph().nodes[n].attrs.find("perm");
  const auto* perm = p ? std::get_if<std::vector<int64_t>>(p) : nullptr;
  return perm && *perm == want;
}

// The activation a node applies to its single input, if it is one the fused ops know (the name
// of their `activation` attribute).
inline std::optional<std::string> activationOf(const Matcher& m, int n) {
  if (m.is(n, "ai.onnx::Relu")) return std::string("relu");
  if (m.is(n, "ai.onnx::Sigmoid")) return std::string("sigmoid");
  if (m.is(n, "ai.onnx::Tanh")) return std::string("tanh");
  if (m.is(n, "ai.onnx::Gelu")) {
    const auto a = m.graph().nodes[n].attrs.get<std::string>("approximate");
    if (a == "none") return std::string("gelu");
    if (a == "tanh") return std::string("gelu_tanh");
  }
  if (m.is(n, "opforge::FusedGeluChain")) {  // what gelu_fusion makes, when it is a plain GELU
    const auto& at = m.graph().nodes[n].attrs;
    const AttrValue* chain = at.find("chain");
    const auto* v = chain ? std::get_if<std::vector<int32_t>>(chain) : nullptr;
    if (v && !v->empty()) return std::nullopt;
    const AttrValue* ap = at.find("approximate");
    const auto* s = ap ? std::get_if<std::string>(ap) : nullptr;
    if (s && *s == "none") return std::string("gelu");
    if (s && *s == "tanh") return std::string("gelu_tanh");
  }
  return std::nullopt;
}

// SiLU (swish), as PyTorch exports nn.SiLU and F.silu: x read by exactly a Sigmoid and a Mul of x
// with the Sigmoid's output, which feeds only that Mul. Returns the (Sigmoid, Mul) nodes.
inline std::optional<std::vector<int>> silu(const Matcher& m, int x) {
  const auto& us = m.uses(x);
  if (us.size() != 2 || m.graph().values[x].is_output) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const int s = us[i], mul = us[1 - i];
    if (!m.is(s, "ai.onnx::Sigmoid") || !m.is(mul, "ai.onnx::Mul")) continue;
    if (m.soleConsumer(m.out(s)) != mul || m.other(mul, x) != m.out(s)) continue;
    if (!m.sameShape(m.out(mul), x)) continue;
    return std::vector<int>{s, mul};
  }
  return std::nullopt;
}

// The exported erf GELU of x: Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add(1), then
// Mul(x, .) -> Mul(., 0.5) or Mul(x, 0.5) -> Mul(., .). Returns the nodes, last one last.
inline std::optional<std::vector<int>> erfGelu(const Matcher& m, int x) {
  const auto& us = m.uses(x);
  if (us.size() != 2 || m.graph().values[x].is_output) return std::nullopt;
  for (int first : us) {
    int scale = -1;
    if (m.is(first, "ai.onnx::Div") && m.graph().nodes[first].inputs[0] == x &&
        m.near(m.graph().nodes[first].inputs[1], std::sqrt(2.0)))
      scale = first;
    else if (m.is(first, "ai.onnx::Mul") && m.near(m.other(first, x), 1.0 / std::sqrt(2.0)))
      scale = first;
    if (scale < 0) continue;
    const int tail = us[0] == first ? us[1] : us[0];
    const int erf = m.soleConsumer(m.out(scale));
    if (!m.is(erf, "ai.onnx::Erf")) continue;
    const int add = m.soleConsumer(m.out(erf));
    if (!m.is(add, "ai.onnx::Add") || !m.near(m.other(add, m.out(erf)), 1.0)) continue;
    const int a1 = m.out(add);
    if (!m.is(tail, "ai.onnx::Mul")) continue;
    if (m.other(tail, x) == a1) {  // Mul(x, 1 + erf) -> Mul(., 0.5)
      if (m.soleConsumer(a1) != tail) continue;
      const int half = m.soleConsumer(m.out(tail));
      if (!m.is(half, "ai.onnx::Mul") || !m.near(m.other(half, m.out(tail)), 0.5)) continue;
      return std::vector<int>{scale, erf, add, tail, half};
    }
    if (m.near(m.other(tail, x), 0.5)) {  // Mul(x, 0.5) -> Mul(., 1 + erf)
      const int prod = m.soleConsumer(m.out(tail));
      if (!m.is(prod, "ai.onnx::Mul") || m.other(prod, m.out(tail)) != a1 ||
          m.soleConsumer(a1) != prod)
        continue;
      return std::vector<int>{scale, erf, add, tail, prod};
    }
  }
  return std::nullopt;
}

}  // namespace opforge::graph::fusion
