// attention_heads: transformers' attention (BERT, GPT-2, LLaMA, ...) splits heads with a Reshape
// to [B, S, H, d] and a Transpose to [B, H, S, d] (K: to [B, H, d, S]), and merges them back with
// Transpose [0, 2, 1, 3] (after an identity Reshape in the TorchScript exports) and a Reshape.
// Where a FusedAttention (layout bhsd, rank 4) reads three such Transposes, each feeding only it,
// and its result reaches such a Transpose back through identity Reshapes alone, it becomes one
// FusedAttention with layout bshd over the [B, S, H, d] tensors that writes [B, Sq, H, dv]: the
// four Transposes (a copy of the tensor each) are read in place. Runs after shape_inputs (850), so
// the Shape chains that computed the identity Reshape's target no longer count as readers.
#include <optional>
#include <string>
#include <vector>

#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

bool sameDims(const Value& a, const Value& b) {
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (!a.dims[i].sameAs(b.dims[i])) return false;
  return true;
}

Status foldHeadTransposes(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* fused = ctx.registry.find("opforge::FusedAttention");
  if (!fused) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  const std::vector<int64_t> swap12 = {0, 2, 1, 3}, to_kt = {0, 2, 3, 1};
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int attn = ctx.order[step];
    if (!m.is(attn, "opforge::FusedAttention")) continue;
    const Node& an = g.nodes[attn];
    if (an.attrs.get<std::string>("layout") != "bhsd" || an.inputs.size() < 3 ||
        g.values[an.inputs[0]].dims.size() != 4)
      continue;
    const bool kt = an.attrs.get<int64_t>("k_transposed") != 0;
    std::vector<int> nodes{attn}, inputs;
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i) {
      const int t = m.producer(an.inputs[i]);
      ok = fusion::hasPerm(m, t, i == 1 && kt ? to_kt : swap12) &&
           m.soleConsumer(an.inputs[i]) == attn;
      if (ok) {
        nodes.push_back(t);
        inputs.push_back(g.nodes[t].inputs[0]);
      }
    }
    if (!ok) continue;
    int c = m.soleConsumer(m.out(attn));
    while (m.is(c, "ai.onnx::Reshape") && g.nodes[c].inputs[0] >= 0 &&
           sameDims(g.values[g.nodes[c].inputs[0]], g.values[m.out(c)])) {
      nodes.push_back(c);
      c = m.soleConsumer(m.out(c));
    }
    if (!fusion::hasPerm(m, c, swap12)) continue;
    nodes.push_back(c);
    if (an.inputs.size() > 3 && an.inputs[3] >= 0) inputs.push_back(an.inputs[3]);
    AttrMap attrs = an.attrs;
    attrs.set("layout", std::string("bshd"));
    attrs.set("k_transposed", int64_t{0});
    if (!m.tryReplace(fused, attrs, inputs, nodes, c, "attention_heads")) continue;
    ++ctx.counters["attention head transposes read in place"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(attention_heads, 860, foldHeadTransposes);  // after shape_inputs (850)

}  // namespace opforge::graph
