// batchnorm_into_conv: Conv -> BatchNormalization (inference) becomes one Conv with
//   W'[m] = W[m] * a[m],  B'[m] = (B[m] - mean[m]) * a[m] + bias[m],  a = scale / sqrt(var + eps)
// when the BatchNormalization is the Conv output's only consumer, that output is not a network
// output, and W, B and the statistics are constants. The fused node is named "<conv>+<bn>" and
// produces the BatchNormalization's output tensor.
#include <cmath>

#include "../passes.h"

namespace opforge::graph {
namespace {

const TensorValue* constantInput(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  return g.values[n.inputs[i]].constant.get();
}

Status foldBatchNorm(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  Graph& g = ctx.g;
  std::vector<int> uses(g.values.size(), 0);
  for (int n : ctx.order)
    if (!g.nodes[n].dead)
      for (int v : g.nodes[n].inputs)
        if (v >= 0) ++uses[v];
  for (int n : ctx.order) {
    Node& bn = g.nodes[n];
    if (bn.dead || bn.op->key() != "ai.onnx::BatchNormalization" || bn.outputs.empty() ||
        bn.attrs.get<int64_t>("training_mode") != 0)
      continue;
    // Outputs past Y (the running statistics of training mode, empty here) must be unused.
    bool extra_used = false;
    for (size_t o = 1; o < bn.outputs.size(); ++o) {
      const int v = bn.outputs[o];
      extra_used = extra_used || (v >= 0 && (uses[v] > 0 || g.values[v].is_output));
    }
    if (extra_used) continue;
    const int y = bn.inputs[0];
    const Value& yv = g.values[y];
    if (yv.producer < 0 || yv.is_output || uses[y] != 1) continue;
    const int ci = yv.producer;
    Node& conv = g.nodes[ci];
    if (conv.dead || conv.op->key() != "ai.onnx::Conv" || conv.outputs.size() != 1) continue;
    const TensorValue* w = constantInput(g, conv, 1);
    const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    const TensorValue* b = has_b ? constantInput(g, conv, 2) : nullptr;
    const TensorValue *scale = constantInput(g, bn, 1), *bias = constantInput(g, bn, 2),
                      *mean = constantInput(g, bn, 3), *var = constantInput(g, bn, 4);
    if (!w || (has_b && !b) || !scale || !bias || !mean || !var || !isFloatType(w->desc.dtype))
      continue;
    const int64_t m = w->desc.dims[0];
    if (m <= 0 || scale->desc.numel() != m || bias->desc.numel() != m || mean->desc.numel() != m ||
        var->desc.numel() != m)
      continue;
    const int64_t per = w->desc.numel() / m;
    const double eps = bn.attrs.get<double>("epsilon");
    auto nw = std::make_shared<TensorValue>();
    nw->desc = w->desc;
    nw->data.resize(w->data.size());
    auto nb = std::make_shared<TensorValue>();
    nb->desc = TensorDesc{w->desc.dtype, {m}};
    nb->data.resize(nb->desc.bytes());
    for (int64_t c = 0; c < m; ++c) {
      const double a = loadAsDouble(scale->data.data(), scale->desc.dtype, c) /
                       std::sqrt(loadAsDouble(var->data.data(), var->desc.dtype, c) + eps);
      for (int64_t i = 0; i < per; ++i)
        storeFromDouble(nw->data.data(), w->desc.dtype, c * per + i,
                        loadAsDouble(w->data.data(), w->desc.dtype, c * per + i) * a);
      const double b0 = b ? loadAsDouble(b->data.data(), b->desc.dtype, c) : 0.0;
      storeFromDouble(nb->data.data(), w->desc.dtype, c,
                      (b0 - loadAsDouble(mean->data.data(), mean->desc.dtype, c)) * a +
                          loadAsDouble(bias->data.data(), bias->desc.dtype, c));
    }
    auto addConst = [&](const std::string& name, std::shared_ptr<TensorValue> t) {
      Value v;
      v.name = g.uniqueValueName(name);
      v.dtype = t->desc.dtype;
      for (int64_t d : t->desc.dims) v.dims.emplace_back(d);
      v.constant = std::move(t);
      return g.addValue(std::move(v));
    };
    const std::string fused = conv.name + "+" + bn.name;
    const int wid = addConst(fused + ":W", nw), bid = addConst(fused + ":B", nb);
    Node& cv = g.nodes[ci];  // addValue does not move nodes, but keep the reference fresh
    cv.inputs[1] = wid;
    if (cv.inputs.size() < 3) cv.inputs.resize(3, -1);
    cv.inputs[2] = bid;
    const int out = g.nodes[n].outputs[0];
    g.values[cv.outputs[0]].producer = -1;
    cv.outputs[0] = out;
    g.values[out].producer = ci;
    g.values[out].producer_output = 0;
    cv.name = fused;
    g.nodes[n].dead = true;
    ++ctx.counters["BatchNormalization folded into Conv"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(batchnorm_into_conv, 200, foldBatchNorm);

}  // namespace opforge::graph
