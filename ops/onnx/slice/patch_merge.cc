// patch_merge: Swin's patch merging as exported — four strided crops of X [N, H, W, C],
//   x0 = X[:, 0::2, 0::2], x1 = X[:, 1::2, 0::2], x2 = X[:, 0::2, 1::2], x3 = X[:, 1::2, 1::2]
// (each one Slice over both axes or two Slices, the first of them shared by two crops),
// concatenated along C — becomes one permutation: Reshape X to [N, H/2, 2, W/2, 2, C], Transpose it
// to [N, H/2, W/2, bw, bh, C] (or [.., bh, bw, ..] for the crops in row-major order), Reshape to
// [N, H/2, W/2, 4C]. Six crops and a Concat (seven layers, each reading its input once) become one
// copy whose innermost axis is whole (the Reshapes are in place, reshape_alias). Runs with constant
// folding on, after slice_constant_params (870), whose attribute-form Slices it reads as well as
// the input form.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include "../common/slice_crops.h"
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

using ops::Crop;
using ops::sliceCrops;

// A constant INT64 vector value.
int int64Constant(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  auto t = std::make_shared<TensorValue>();
  t->desc.dtype = DataType::kInt64;
  t->desc.dims = {static_cast<int64_t>(v.size())};
  t->data.resize(v.size() * sizeof(int64_t));
  if (!v.empty()) std::memcpy(t->data.data(), v.data(), t->data.size());
  Value val;
  val.name = g.uniqueValueName(name);
  val.dtype = DataType::kInt64;
  val.dims = {DimExpr(static_cast<int64_t>(v.size()))};
  val.constant = std::move(t);
  std::vector<DimExpr> sym;
  for (int64_t e : v) sym.emplace_back(e);
  val.sym_value = std::move(sym);
  return g.addValue(std::move(val));
}

Status mergePatches(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* reshape = ctx.registry.find("ai.onnx::Reshape");
  const RegisteredOp* transpose = ctx.registry.find("ai.onnx::Transpose");
  if (!reshape || !transpose) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int c = ctx.order[step];
    if (!m.is(c, "ai.onnx::Concat") || g.nodes[c].inputs.size() != 4) continue;
    const Node cat = g.nodes[c];  // a copy: addNode below may move g.nodes
    // Each input: up to two Slices down to one X, which crop axes 1 and 2 by 2 and nothing else.
    int x = -1;
    std::set<int> slices;
    std::array<std::array<int64_t, 2>, 4> origin{};  // (row, column) of each crop's first element
    bool ok = true;
    for (int k = 0; k < 4 && ok; ++k) {
      int v = cat.inputs[k];
      std::map<int, Crop> crops;
      for (int depth = 0; depth < 2 && ok && !(crops.count(1) && crops.count(2)); ++depth) {
        const int s = m.producer(v);
        if (!m.is(s, "ai.onnx::Slice") || g.nodes[s].guards != cat.guards) break;
        const auto sc = sliceCrops(g, g.nodes[s]);
        ok = sc.has_value();
        for (const auto& [a, cr] : ok ? *sc : std::map<int, Crop>{})
          ok = ok && crops.emplace(a, cr).second;
        slices.insert(s);
        v = g.nodes[s].inputs[0];
      }
      if (!ok || crops.size() != 2 || !crops.count(1) || !crops.count(2) || v < 0) {
        ok = false;
        break;
      }
      if (x < 0) x = v;
      ok = x == v;
      for (int a = 1; a <= 2 && ok; ++a) {
        const Crop& cr = crops[a];
        const int64_t d = g.values[x].dims[a].constValue();
        ok = cr.step == 2 && (cr.begin == 0 || cr.begin == 1) && cr.end >= d - 1 + cr.begin &&
             d % 2 == 0;
        origin[k][a - 1] = cr.begin;
      }
    }
    if (!ok || x < 0 || g.values[x].dims.size() != 4) continue;
    const auto& xd = g.values[x].dims;
    if (!xd[3].isConst()) continue;
    int64_t axis = cat.attrs.get<int64_t>("axis");
    if (axis < 0) axis += 4;
    if (axis != 3) continue;
    // The crops' order along C: column-major (Swin: (0,0), (1,0), (0,1), (1,1)) or row-major.
    bool col_major = true, row_major = true;
    for (int k = 0; k < 4; ++k) {
      col_major = col_major && k == origin[k][1] * 2 + origin[k][0];
      row_major = row_major && k == origin[k][0] * 2 + origin[k][1];
    }
    if (!col_major && !row_major) continue;
    // Every Slice of the pattern is read by the pattern alone.
    for (int s : slices) {
      ok = ok && !g.values[m.out(s)].is_output;
      for (int u : m.uses(m.out(s))) ok = ok && (u == c || slices.count(u));
    }
    if (!ok) continue;
    const int64_t h = xd[1].constValue() / 2, w = xd[2].constValue() / 2, ch = xd[3].constValue();
    const std::string base = cat.name + ":patch_merge";
    const int shape1 = int64Constant(g, base + ":split", {0, h, 2, w, 2, ch});
    const int shape2 = int64Constant(g, base + ":shape", {0, h, w, 4 * ch});
    auto r1 = addNode(g, reshape, g.uniqueNodeName(base + ":split"), {}, {x, shape1}, {}, false);
    if (!r1) {
      if (ctx.log) ctx.log("warning: patch_merge: not fused: " + r1.status().message());
      continue;
    }
    AttrMap perm;
    perm.set("perm", AttrValue(col_major ? std::vector<int64_t>{0, 1, 3, 4, 2, 5}
                                         : std::vector<int64_t>{0, 1, 3, 2, 4, 5}));
    auto t = addNode(g, transpose, g.uniqueNodeName(base + ":permute"), perm,
                     {g.nodes[*r1].outputs[0]}, {}, false);
    if (!t) {
      g.nodes[*r1].dead = true;
      if (ctx.log) ctx.log("warning: patch_merge: not fused: " + t.status().message());
      continue;
    }
    g.nodes[*r1].guards = g.nodes[*t].guards = cat.guards;
    ctx.order.insert(ctx.order.begin() + static_cast<std::ptrdiff_t>(step), {*r1, *t});
    step += 2;  // the Concat's place
    std::vector<int> nodes(slices.begin(), slices.end());
    nodes.push_back(c);
    auto r2 = m.replace(reshape, {}, {g.nodes[*t].outputs[0], shape2}, nodes, c, "patch_merge");
    if (!r2) return r2.status();  // the Concat's shape is [N, H/2, W/2, 4C]: the rule cannot refuse
    ++ctx.counters["patch mergings made one Transpose"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(patch_merge, 875, mergePatches);

}  // namespace opforge::graph
