// qdq_fusion.h — what the Q/DQ fusions share (qlinearconv/qdq_conv_fusion.cc,
// qlinearmatmul/qdq_matmul_fusion.cc): recognizing the explicitly quantized form that ONNX
// Runtime's quantizer, NVIDIA ModelOpt and TensorRT use —
//
//   x_q -> DequantizeLinear -> Conv / MatMul <- DequantizeLinear <- w_q (or Q(w) of a constant w)
//                                  [-> Relu] -> QuantizeLinear -> y_q
//
// and the parameters of each Q/DQ node (8-bit data, block_size 0, a per-tensor or per-axis scale).
// The fusions run before constant folding (which would turn the weights' DequantizeLinear into
// float weights) and replace the float operation and its QuantizeLinear by the integer op; the
// DequantizeLinear nodes stay for any other consumer and go with dead_nodes otherwise.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/fold.h"
#include "graph/passes/fusion_util.h"

namespace opforge::graph::qdq {

// One QuantizeLinear / DequantizeLinear node's operands (value ids; zp -1 when absent).
struct QParam {
  int node = -1;
  int data = -1;   // DQ: the quantized input; Q: the float input
  int scale = -1;  // FP32 / FP16 / BF16
  int zp = -1;
  DataType qtype = DataType::kUndefined;  // the 8-bit type
  int axis = 0;                           // normalized; meaningful for a 1-D scale
  bool per_tensor = true;
};

inline bool is8Bit(DataType t) {
  return t == DataType::kInt8 || t == DataType::kUInt8;
}

// Scale and zero point of node n (a Q or DQ) and the quantized type `qt`: 8-bit, no blocks, a
// scale of one element or 1-D.
inline std::optional<QParam> paramsOf(const fusion::Matcher& m, int n, DataType qt, int rank) {
  const Graph& g = m.graph();
  const Node& node = g.nodes[n];
  if (!is8Bit(qt) || node.attrs.get<int64_t>("block_size") != 0) return std::nullopt;
  QParam p;
  p.node = n;
  p.data = node.inputs[0];
  p.scale = node.inputs[1];
  p.zp = node.inputs.size() > 2 ? node.inputs[2] : -1;
  p.qtype = qt;
  const Value& s = g.values[p.scale];
  if (s.dims.size() > 1) return std::nullopt;
  p.per_tensor = s.dims.empty() || (s.dims[0].isConst() && s.dims[0].constValue() == 1);
  const int64_t axis = node.attrs.get<int64_t>("axis");
  if (axis < -rank || axis >= rank) return std::nullopt;
  p.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  return p;
}

// v, or the value behind the Identity nodes that produce it (exporters share equal weights and
// biases through Identity).
inline int throughIdentity(const fusion::Matcher& m, int v) {
  for (int n = m.producer(v); m.is(n, "ai.onnx::Identity"); n = m.producer(v))
    v = m.graph().nodes[n].inputs[0];
  return v;
}

// The DequantizeLinear that produces float value v (through Identity), when its data are 8-bit. A
// weight given as QuantizeLinear of a constant is quantized here (the Q node is evaluated on the
// CPU, as constant folding would), so the DQ reads an 8-bit constant.
inline std::optional<QParam> dequantizerOf(fusion::Matcher& m, int v) {
  const int n = m.producer(throughIdentity(m, v));
  if (!m.is(n, "ai.onnx::DequantizeLinear")) return std::nullopt;
  Graph& g = m.graph();
  const int q = g.nodes[n].inputs[0];
  if (const int qn = m.producer(q); m.is(qn, "ai.onnx::QuantizeLinear")) {
    auto folded = foldNode(g, qn, 0);
    if (folded.isOk() && *folded) m.rebuild();
  }
  return paramsOf(m, n, g.values[q].dtype, static_cast<int>(g.values[q].dims.size()));
}

// The QuantizeLinear that is the sole consumer of float value v, or of a Relu that is (`relu`: that
// Relu's node, folded into the integer op as max(y, y_zero_point)).
struct Quantizer {
  QParam q;
  int relu = -1;
};
inline std::optional<Quantizer> quantizerOf(const fusion::Matcher& m, int v) {
  const Graph& g = m.graph();
  Quantizer r;
  int n = m.soleConsumer(v);
  if (m.is(n, "ai.onnx::Relu")) {
    r.relu = n;
    n = m.soleConsumer(m.out(n));
  }
  if (!m.is(n, "ai.onnx::QuantizeLinear")) return std::nullopt;
  auto p = paramsOf(m, n, g.values[g.nodes[n].outputs[0]].dtype,
                    static_cast<int>(g.values[v].dims.size()));
  if (!p) return std::nullopt;
  r.q = *p;
  if (r.relu >= 0) {  // max(y, zero point) is the Relu only for a positive scale
    const Value& s = g.values[p->scale];
    if (!s.constant || s.constant->desc.numel() != 1 ||
        !(loadAsDouble(s.constant->data.data(), s.constant->desc.dtype, 0) > 0))
      return std::nullopt;
  }
  return r;
}

// The nodes an integer op replaces: the product, the Relu if any, the QuantizeLinear (last).
inline std::vector<int> replacedNodes(int product, const Quantizer& y) {
  std::vector<int> nodes{product};
  if (y.relu >= 0) nodes.push_back(y.relu);
  nodes.push_back(y.q.node);
  return nodes;
}

// A constant value of `dims` elements of type t, all zero (a zero point the Q/DQ node left out).
inline int zeros(Graph& g, DataType t, const std::vector<DimExpr>& dims, const std::string& base) {
  auto c = std::make_shared<TensorValue>();
  c->desc.dtype = t;
  for (const auto& d : dims) c->desc.dims.push_back(d.constValue());
  c->data.assign(c->desc.bytes(), 0);
  Value val;
  val.name = g.uniqueValueName(base);
  val.dtype = t;
  val.dims = dims;
  val.constant = std::move(c);
  return g.addValue(std::move(val));
}

// The zero point of p as an input of the integer op: its own, or zeros shaped like its scale.
inline int zeroPointOf(Graph& g, const QParam& p) {
  if (p.zp >= 0) return p.zp;
  for (const auto& d : g.values[p.scale].dims)
    if (!d.isConst()) return -1;
  return zeros(g, p.qtype, g.values[p.scale].dims, g.values[p.scale].name + ":zero_point");
}

// The values of a constant of any numeric type (nullopt when v is not a constant).
inline std::optional<std::vector<double>> constantValues(const Graph& g, int v) {
  if (v < 0 || !g.values[v].constant) return std::nullopt;
  const TensorValue& t = *g.values[v].constant;
  std::vector<double> out(static_cast<size_t>(t.desc.numel()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = loadAsDouble(t.data.data(), t.desc.dtype, static_cast<int64_t>(i));
  return out;
}

}  // namespace opforge::graph::qdq
