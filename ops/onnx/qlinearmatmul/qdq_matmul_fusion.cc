// qdq_matmul_fusion: DequantizeLinear(a_q) and DequantizeLinear(b_q) -> MatMul [-> Relu] ->
// QuantizeLinear becomes one ai.onnx::QLinearMatMul (common/qdq_fusion.h describes the pattern):
// a per tensor or per row (DequantizeLinear axis rank - 2), b per tensor or per column (axis
// rank - 1), y per tensor; the three scales of one type (FP32, FP16 or BF16), 8-bit data. The
// MatMul's output must feed only the QuantizeLinear. Runs before constant folding, with it on.
#include "../common/qdq_fusion.h"

namespace opforge::graph {
namespace {

Status fuseQdqMatMuls(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* fused = ctx.registry.find("ai.onnx::QLinearMatMul");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int mm = ctx.order[step];
    if (!m.is(mm, "ai.onnx::MatMul")) continue;
    const Node& node = g.nodes[mm];
    const auto a = qdq::dequantizerOf(m, node.inputs[0]);
    const auto b = qdq::dequantizerOf(m, node.inputs[1]);
    const auto yq = qdq::quantizerOf(m, m.out(mm));
    if (!a || !b || !yq || !yq->q.per_tensor) continue;
    const qdq::QParam* y = &yq->q;
    const int ra = static_cast<int>(g.values[a->data].dims.size()),
              rb = static_cast<int>(g.values[b->data].dims.size());
    if (!a->per_tensor && (ra < 2 || a->axis != ra - 2)) continue;
    if (!b->per_tensor && (rb < 2 || b->axis != rb - 1)) continue;
    const DataType st = g.values[a->scale].dtype;
    if (g.values[b->scale].dtype != st || g.values[y->scale].dtype != st) continue;
    const int za = qdq::zeroPointOf(g, *a), zb = qdq::zeroPointOf(g, *b),
              zy = qdq::zeroPointOf(g, *y);
    if (za < 0 || zb < 0 || zy < 0) continue;
    AttrMap attrs;
    attrs.set("_onnx_opset", int64_t{21});  // scales of any float type
    attrs.set("_relu", int64_t{yq->relu >= 0});
    const std::vector<int> inputs{a->data, a->scale, za, b->data, b->scale, zb, y->scale, zy};
    if (!m.tryReplace(fused, attrs, inputs, qdq::replacedNodes(mm, *yq), y->node,
                      "qdq_matmul_fusion"))
      continue;
    ++ctx.counters["Q/DQ matrix products fused to QLinearMatMul"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(qdq_matmul_fusion, 91, fuseQdqMatMuls);

}  // namespace opforge::graph
