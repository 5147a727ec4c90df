// concat_identity: operands of a Concat whose extent along the concatenation axis is 0 (a
// transformers DynamicCache's empty past keys and values, concatenated with the new ones) are
// dropped, and a Concat left with one operand is dropped — its readers read that operand (GPT-2's
// TorchScript export: the attention then sees the head Transposes that attention_heads reads in
// place). The output keeps its shape and every element either way; an operand empty along another
// axis still adds its extent to the output's (a fuzzer finding: dropping one changed the output's
// shape). Runs with constant folding on (the optimization switch), before attention_heads (860).
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

// Whether v's extent along `axis` (negative: from the end) is the constant 0.
bool emptyAlong(const Value& v, int64_t axis) {
  const int64_t r = static_cast<int64_t>(v.dims.size());
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return false;
  const DimExpr& d = v.dims[static_cast<size_t>(axis)];
  return d.isConst() && d.constValue() == 0;
}

Status concatIdentity(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int n = ctx.order[step];
    if (!m.is(n, "ai.onnx::Concat")) continue;
    const std::vector<int> in = g.nodes[n].inputs;
    const int64_t axis = g.nodes[n].attrs.get<int64_t>("axis");
    std::vector<int> kept;
    size_t through = 0;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i] >= 0 && !emptyAlong(g.values[in[i]], axis)) {
        kept.push_back(in[i]);
        through = i;
      }
    if (kept.empty() || kept.size() == in.size()) {
      if (in.size() == 1 && m.bypass(n, "concat_identity"))
        ++ctx.counters["one-operand Concats dropped"];
      continue;
    }
    if (kept.size() == 1) {
      if (m.bypass(n, "concat_identity", through))
        ++ctx.counters["Concats of one non-empty operand dropped"];
      continue;
    }
    const AttrMap attrs = g.nodes[n].attrs;  // a copy: replacing appends to g.nodes
    if (m.tryReplace(g.nodes[n].op, attrs, kept, {n}, n, "concat_identity"))
      ctx.counters["empty Concat operands dropped"] += static_cast<int>(in.size() - kept.size());
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(concat_identity, 855, concatIdentity);

}  // namespace opforge::graph
