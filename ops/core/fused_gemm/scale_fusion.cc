// gemm_scale_fusion: a per-channel scale after a FusedMatMul without activation (or a Gemm
// without transA) —
//   Mul(FusedMatMul(A, B, bias), s)  or  Mul(Transpose(FusedMatMul(A, B, bias)), s)
// with s a constant that varies only along the axis holding the GEMM's N columns (or not at all)
// — is folded into the GEMM: B's columns and the bias are scaled (new constants; the originals may
// be shared), and the Mul is dropped. timm's and torchvision's LayerScale (ConvNeXt's
// `layer_scale * permute(fc2(x))`, CaiT's and DeiT-III's `gamma * proj(x)`) becomes free: one
// full-tensor pass a block less. Every intermediate value must feed only the chain and not be a
// network output. Runs after gemm_fusion, with constant folding on (the optimization switch).
#include <memory>

#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

// The N scale factors of constant s against the Mul's other operand of dims `v`, whose axis `p`
// holds the N columns; nullopt if s varies along any other axis or does not broadcast.
std::optional<std::vector<double>> columnScales(const Graph& g, int s,
                                                const std::vector<DimExpr>& v, int p, int64_t n) {
  if (s < 0 || !g.values[s].constant) return std::nullopt;
  const TensorValue& c = *g.values[s].constant;
  const int rs = c.desc.rank(), rv = static_cast<int>(v.size());
  if (rs > rv || dtypeSize(c.desc.dtype) == 0) return std::nullopt;
  int64_t along = 1;
  for (int a = 0; a < rs; ++a) {
    const int64_t d = c.desc.dims[a];
    if (rv - rs + a == p) {
      if (d != 1 && d != n) return std::nullopt;
      along = d;
    } else if (d != 1) {
      return std::nullopt;
    }
  }
  if (c.data.size() < static_cast<size_t>(along) * dtypeSize(c.desc.dtype)) return std::nullopt;
  std::vector<double> out(n);
  for (int64_t j = 0; j < n; ++j)
    out[j] = loadAsDouble(c.data.data(), c.desc.dtype, along == 1 ? 0 : j);
  return out;
}

// A new constant: `from`'s values times the scale of their column (`col(i)`).
template <typename Col>
int scaledCopy(Graph& g, int from, const std::vector<double>& scale, Col col) {
  const Value& src = g.values[from];
  auto t = std::make_shared<TensorValue>(*src.constant);
  const int64_t count = t->desc.numel();
  for (int64_t i = 0; i < count; ++i)
    storeFromDouble(t->data.data(), t->desc.dtype, i,
                    loadAsDouble(t->data.data(), t->desc.dtype, i) * scale[col(i)]);
  Value val;
  val.name = g.uniqueValueName(src.name + ":scaled");
  val.dtype = src.dtype;
  val.dims = src.dims;
  val.constant = std::move(t);
  return g.addValue(std::move(val));
}

Status foldScales(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int f = ctx.order[step];
    const bool gemm = m.is(f, "ai.onnx::Gemm");
    if (!gemm && !m.is(f, "opforge::FusedMatMul")) continue;
    const Node& fn = g.nodes[f];
    if (gemm ? fn.attrs.get<int64_t>("transA") != 0
             : fn.attrs.get<std::string>("activation") != "none")
      continue;
    const int b = fn.inputs[1], bias = fn.inputs.size() > 2 ? fn.inputs[2] : -1;
    if (!g.values[b].constant || g.values[b].dims.size() != 2) continue;
    if (bias >= 0 && !g.values[bias].constant) continue;
    const int y = m.out(f);
    const int ry = static_cast<int>(g.values[y].dims.size());
    const DimExpr& nd = g.values[y].dims.back();
    if (!nd.isConst()) continue;
    const int64_t n = nd.constValue();
    int next = m.soleConsumer(y), v = y, p = ry - 1, t = -1;
    if (m.is(next, "ai.onnx::Transpose")) {
      const AttrValue* pa = g.nodes[next].attrs.find("perm");
      const auto* perm = pa ? std::get_if<std::vector<int64_t>>(pa) : nullptr;
      if (!perm || static_cast<int>(perm->size()) != ry) continue;
      p = -1;
      for (int i = 0; i < ry; ++i)
        if ((*perm)[i] == ry - 1) p = i;
      if (p < 0) continue;
      t = next;
      v = m.out(t);
      next = m.soleConsumer(v);
    }
    if (!m.is(next, "ai.onnx::Mul")) continue;
    const int s = m.other(next, v);
    if (s < 0 || !m.sameShape(m.out(next), v)) continue;
    const auto scale = columnScales(g, s, g.values[v].dims, p, n);
    if (!scale) continue;
    const bool tb = fn.attrs.get<int64_t>("transB") != 0;
    const int64_t bn = tb ? g.values[b].constant->desc.dims[0] : g.values[b].constant->desc.dims[1];
    // The bias (Gemm's C) must be one value per column: [N], [1, N].
    if (bn != n || (bias >= 0 && (g.values[bias].constant->desc.numel() != n ||
                                  g.values[bias].constant->desc.dims.back() != n)))
      continue;
    if (g.values[m.out(next)].is_output || g.nodes[next].guards != fn.guards) continue;
    // B is [K, N], or [N, K] under transB: the column of element i.
    const int64_t k = g.values[b].constant->desc.numel() / n;
    const int b2 = scaledCopy(g, b, *scale, [&](int64_t i) { return tb ? i / k : i % n; });
    const int bias2 = bias >= 0 ? scaledCopy(g, bias, *scale, [](int64_t i) { return i; }) : -1;
    const AttrMap attrs = g.nodes[f].attrs;
    const int a = g.nodes[f].inputs[0], mul = next;
    const size_t through = g.nodes[mul].inputs[0] == v ? 0 : 1;
    if (!m.tryReplace(g.nodes[f].op, attrs, {a, b2, bias2}, {f}, f, "gemm_scale_fusion")) continue;
    if (!m.bypass(mul, "gemm_scale_fusion", through))  // checked above: cannot happen
      return Status::internal("gemm_scale_fusion: the Mul after " + g.nodes[f].name +
                              " could not be dropped once its scale was folded");
    ++ctx.counters["per-channel scales folded into GEMMs"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(gemm_scale_fusion, 262, foldScales);

}  // namespace opforge::graph
