// transpose_views: a Transpose of a 3-D view that merges leading axes, viewed back —
//   Reshape x [a, b, ..., rest] -> [a*b*..., rest] -> Transpose(0, ...) -> Reshape [a, b, ...,
//   rest']
// — is one Transpose of x (the merged axes stay in front and in order). PyTorch's dynamo exporter
// writes K^T of scaled_dot_product_attention so: K [B, H, S, d] -> [B*H, S, d] -> Transpose(0, 2,
// 1) -> [B, H, d, S]; as one Transpose(0, 1, 3, 2) the attention fusion reads it as K transposed
// (and attention_heads the head Transposes in place). The views must feed only the chain and not be
// network outputs. Runs with constant folding on (the optimization switch), before
// attention_fusion.
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

Status foldTransposeViews(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* transpose = ctx.registry.find("ai.onnx::Transpose");
  if (!transpose) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int t = ctx.order[step];
    if (!m.is(t, "ai.onnx::Transpose")) continue;
    const AttrValue* pa = g.nodes[t].attrs.find("perm");
    const auto* perm = pa ? std::get_if<std::vector<int64_t>>(pa) : nullptr;
    if (!perm || perm->empty() || (*perm)[0] != 0) continue;
    const int r1 = m.producer(g.nodes[t].inputs[0]);
    if (!m.is(r1, "ai.onnx::Reshape") || m.soleConsumer(m.out(r1)) != t) continue;
    const int r2 = m.soleConsumer(m.out(t));
    if (!m.is(r2, "ai.onnx::Reshape")) continue;
    const int x = g.nodes[r1].inputs[0];
    const auto &xd = g.values[x].dims, &md = g.values[m.out(r1)].dims,
               &td = g.values[m.out(t)].dims, &yd = g.values[m.out(r2)].dims;
    const int r = static_cast<int>(md.size()), rx = static_cast<int>(xd.size());
    const int k = rx - r + 1;  // x's leading axes merged into the view's first
    if (r < 2 || k < 2 || static_cast<int>(yd.size()) != rx) continue;
    bool ok = true;
    for (int a = 1; a < r && ok; ++a) ok = md[a].sameAs(xd[k - 1 + a]);  // the rest unchanged
    for (int a = 0; a < k && ok; ++a) ok = yd[a].sameAs(xd[a]);          // split back the same
    for (int a = 1; a < r && ok; ++a) ok = yd[k - 1 + a].sameAs(td[a]);
    if (!ok) continue;
    std::vector<int64_t> p;
    for (int a = 0; a < k; ++a) p.push_back(a);
    for (int a = 1; a < r; ++a) p.push_back(k - 1 + (*perm)[a]);
    AttrMap attrs;
    attrs.set("perm", AttrValue(p));
    if (!m.tryReplace(transpose, attrs, {x}, {r1, t, r2}, r2, "transpose_views")) continue;
    ++ctx.counters["transposes of merged-axis views made one Transpose"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(transpose_views, 120, foldTransposeViews);

}  // namespace opforge::graph
