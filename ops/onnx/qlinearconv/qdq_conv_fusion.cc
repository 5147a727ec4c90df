// qdq_conv_fusion: DequantizeLinear(x_q) and DequantizeLinear(w_q) -> Conv [-> Relu] ->
// QuantizeLinear becomes one ai.onnx::QLinearConv (common/qdq_fusion.h describes the pattern): x
// and y per tensor, w per tensor or per output channel (DequantizeLinear axis 0), FP32 scales,
// 8-bit data. The bias is the INT32 constant behind its DequantizeLinear when its scales are
// x_scale * w_scale (within 1e-5) and its zero point 0; a float constant bias, or one dequantized
// with other scales (ONNX Runtime's quantizer adjusts them where the bias would overflow), is
// quantized with x_scale
// * w_scale (constant scales). Any other bias leaves the Conv as it is. The Conv's
// output must feed only the QuantizeLinear. Runs before constant folding, with it on (the
// builder's optimization switch).
#include <cmath>
#include <limits>

#include "../common/qdq_fusion.h"

namespace opforge::graph {
namespace {

// The per-channel products x_scale * w_scale (float steps, as the scales are FP32) when both are
// constants; one element per output channel (m of them).
std::optional<std::vector<double>> biasScales(const Graph& g, const qdq::QParam& x,
                                              const qdq::QParam& w, int64_t m) {
  auto sx = qdq::constantValues(g, x.scale), sw = qdq::constantValues(g, w.scale);
  if (!sx || !sw || sx->size() != 1 || (sw->size() != 1 && static_cast<int64_t>(sw->size()) != m))
    return std::nullopt;
  std::vector<double> s(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i)
    s[i] = static_cast<float>(static_cast<float>((*sx)[0]) *
                              static_cast<float>((*sw)[sw->size() == 1 ? 0 : i]));
  return s;
}

// The bias as floats: a constant, or a DequantizeLinear of constants (evaluated as it would be,
// in float); with, for the latter, its INT32 data when its scales are x_scale * w_scale (within
// 1e-5) and its zero point 0, so that they serve unchanged.
struct BiasValues {
  std::vector<double> f;
  int same_scale_data = -1;
};

std::optional<BiasValues> biasValues(fusion::Matcher& m, int b, const std::vector<double>& s) {
  const Graph& g = m.graph();
  b = qdq::throughIdentity(m, b);
  BiasValues r;
  if (auto c = qdq::constantValues(g, b)) {
    r.f = std::move(*c);
    return r;
  }
  const int dq = m.producer(b);
  if (!m.is(dq, "ai.onnx::DequantizeLinear")) return std::nullopt;
  const Node& node = g.nodes[dq];
  const int data = node.inputs[0];
  auto q = qdq::constantValues(g, data), sb = qdq::constantValues(g, node.inputs[1]);
  std::optional<std::vector<double>> z;
  if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
    z = qdq::constantValues(g, node.inputs[2]);
    if (!z) return std::nullopt;
  }
  if (!q || !sb || q->size() != s.size() || (sb->size() != 1 && sb->size() != s.size()) ||
      (z && z->size() != sb->size()))
    return std::nullopt;
  bool same = g.values[data].dtype == DataType::kInt32;
  for (size_t i = 0; i < q->size(); ++i) {
    const size_t k = sb->size() == 1 ? 0 : i;
    const double zp = z ? (*z)[k] : 0.0;
    r.f.push_back(
        static_cast<float>(static_cast<float>((*q)[i] - zp) * static_cast<float>((*sb)[k])));
    same = same && zp == 0 && std::fabs((*sb)[k] - s[i]) <= 1e-5 * std::fabs(s[i]);
  }
  if (same) r.same_scale_data = data;
  return r;
}

// The INT32 bias input of the fused node, or -1 when the bias can not be expressed as one: its
// INT32 data where they serve unchanged, else the float bias quantized with x_scale * w_scale
// (round half to even; within half a unit of the accumulator).
int int32Bias(fusion::Matcher& m, int b, const qdq::QParam& x, const qdq::QParam& w, int64_t mch) {
  Graph& g = m.graph();
  const auto s = biasScales(g, x, w, mch);
  if (!s) return -1;
  const auto bv = biasValues(m, b, *s);
  if (!bv || static_cast<int64_t>(bv->f.size()) != mch) return -1;
  if (bv->same_scale_data >= 0) return bv->same_scale_data;
  auto c = std::make_shared<TensorValue>();
  c->desc = TensorDesc{DataType::kInt32, {mch}};
  c->data.assign(c->desc.bytes(), 0);
  for (int64_t i = 0; i < mch; ++i) {
    const double q = std::nearbyint(bv->f[i] / (*s)[i]);
    if (!(std::fabs(q) <= std::numeric_limits<int32_t>::max())) return -1;
    storeFromDouble(c->data.data(), DataType::kInt32, i, q);
  }
  Value val;
  val.name = g.uniqueValueName(g.values[b].name + ":int32");
  val.dtype = DataType::kInt32;
  val.dims = {DimExpr(mch)};
  val.constant = std::move(c);
  return g.addValue(std::move(val));
}

Status fuseQdqConvs(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* fused = ctx.registry.find("ai.onnx::QLinearConv");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int conv = ctx.order[step];
    if (!m.is(conv, "ai.onnx::Conv")) continue;
    const Node& node = g.nodes[conv];
    const auto x = qdq::dequantizerOf(m, node.inputs[0]);
    const auto w = qdq::dequantizerOf(m, node.inputs[1]);
    const auto yq = qdq::quantizerOf(m, m.out(conv));
    if (!x || !w || !yq) continue;  // not the Q/DQ form
    const qdq::QParam* y = &yq->q;
    AttrMap attrs = node.attrs;  // a copy: addNode below may move the nodes
    attrs.set("_relu", int64_t{yq->relu >= 0});
    const std::string name = node.name;
    auto skip = [&](const std::string& why) {
      if (ctx.log) ctx.log("qdq_conv_fusion: " + name + " not fused: " + why);
    };
    if (!x->per_tensor || !y->per_tensor || (!w->per_tensor && w->axis != 0)) {
      skip("x and y must be quantized per tensor, w per tensor or per output channel (axis 0)");
      continue;
    }
    const auto& wdims = g.values[w->data].dims;
    if (wdims.empty() || !wdims[0].isConst()) continue;
    const int64_t mch = wdims[0].constValue();
    bool fp32 = true;
    for (int s : {x->scale, w->scale, y->scale})
      fp32 = fp32 && g.values[s].dtype == DataType::kFloat32;
    if (!fp32) {
      skip("QLinearConv takes FP32 scales only");
      continue;
    }
    int bias = -1;
    if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
      bias = int32Bias(m, node.inputs[2], *x, *w, mch);
      if (bias < 0) {
        skip("the bias is not constant, its scales are not constant, or it overflows INT32");
        continue;
      }
    }
    const int zx = qdq::zeroPointOf(g, *x), zw = qdq::zeroPointOf(g, *w),
              zy = qdq::zeroPointOf(g, *y);
    if (zx < 0 || zw < 0 || zy < 0) continue;
    const std::vector<int> inputs{x->data, x->scale, zx, w->data, w->scale, zw, y->scale, zy, bias};
    if (!m.tryReplace(fused, attrs, inputs, qdq::replacedNodes(conv, *yq), y->node,
                      "qdq_conv_fusion"))
      continue;
    ++ctx.counters["Q/DQ convolutions fused to QLinearConv"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(qdq_conv_fusion, 90, fuseQdqConvs);

}  // namespace opforge::graph
