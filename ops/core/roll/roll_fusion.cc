// roll_fusion: an exported torch.roll — Concat(Slice(x, [p, d)), Slice(x, [0, p))) along one axis
// — becomes one opforge::Roll, and a Roll of a Roll read by nothing else becomes one Roll over
// both's axes. Spec: README.md. Runs with constant folding on (the optimization switch), after
// slice_constant_params (870), whose attribute-form Slices it reads as well as the input form.
#include <algorithm>

#include "../../onnx/common/slice_crops.h"
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

struct Range {
  int axis;
  int64_t begin, end;  // clamped to [0, d]
};

// The range a Slice keeps of its input: one axis of a size known now, steps of 1; else nullopt.
std::optional<Range> sliceRange(const Graph& g, const Node& s) {
  const auto crops = ops::sliceCrops(g, s);
  if (!crops || crops->size() != 1) return std::nullopt;
  const auto& [axis, c] = *crops->begin();
  if (c.step != 1) return std::nullopt;
  return Range{axis, c.begin, c.end};
}

Status fuseRolls(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* roll = ctx.registry.find("opforge::Roll");
  if (!roll) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int c = ctx.order[step];
    if (!m.is(c, "ai.onnx::Concat") || g.nodes[c].inputs.size() != 2) continue;
    const int s1 = m.producer(g.nodes[c].inputs[0]), s2 = m.producer(g.nodes[c].inputs[1]);
    if (!m.is(s1, "ai.onnx::Slice") || !m.is(s2, "ai.onnx::Slice")) continue;
    const int x = g.nodes[s1].inputs[0];
    if (x < 0 || g.nodes[s2].inputs[0] != x || s1 == s2) continue;
    if (m.soleConsumer(m.out(s1)) != c || m.soleConsumer(m.out(s2)) != c) continue;
    const auto r1 = sliceRange(g, g.nodes[s1]), r2 = sliceRange(g, g.nodes[s2]);
    if (!r1 || !r2 || r1->axis != r2->axis) continue;
    const int rank = static_cast<int>(g.values[x].dims.size());
    int64_t axis = g.nodes[c].attrs.get<int64_t>("axis");
    if (axis < 0) axis += rank;
    if (axis != r1->axis) continue;
    const int64_t d = g.values[x].dims[axis].constValue(), p = r1->begin;
    if (!(p > 0 && p < d && r1->end == d && r2->begin == 0 && r2->end == p)) continue;
    AttrMap attrs;
    attrs.set("shifts", AttrValue(std::vector<int64_t>{-p}));
    attrs.set("axes", AttrValue(std::vector<int64_t>{axis}));
    if (m.tryReplace(roll, attrs, {x}, {s1, s2, c}, c, "roll_fusion"))
      ++ctx.counters["rolls made of Slice + Concat"];
  }
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int n = ctx.order[step];
    if (!m.is(n, "opforge::Roll")) continue;
    const int q = m.producer(g.nodes[n].inputs[0]);
    if (!m.is(q, "opforge::Roll") || m.soleConsumer(m.out(q)) != n) continue;
    const Node &inner = g.nodes[q], &outer = g.nodes[n];
    if (inner.guards != outer.guards) continue;
    auto shifts = inner.attrs.get<std::vector<int64_t>>("shifts");
    auto axes = inner.attrs.get<std::vector<int64_t>>("axes");
    for (int64_t v : outer.attrs.get<std::vector<int64_t>>("shifts")) shifts.push_back(v);
    for (int64_t v : outer.attrs.get<std::vector<int64_t>>("axes")) axes.push_back(v);
    AttrMap attrs;
    attrs.set("shifts", AttrValue(shifts));
    attrs.set("axes", AttrValue(axes));
    if (m.tryReplace(roll, attrs, {inner.inputs[0]}, {q, n}, n, "roll_fusion"))
      ++ctx.counters["rolls merged"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(roll_fusion, 880, fuseRolls);

}  // namespace opforge::graph
