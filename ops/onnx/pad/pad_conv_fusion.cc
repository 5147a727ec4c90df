// pad_conv_fusion: an explicit zero Pad of the spatial axes before a Conv — what TensorFlow
// exports and timm's "same" convolutions (Conv2dSame, tf_* models) write — becomes the Conv's own
// padding: Pad(x, mode constant, value 0, pads >= 0 on axes 2...) -> Conv(auto_pad NOTSET) is one
// Conv whose pads are the sum. The padded tensor (a full copy, larger than x) is never written.
// The Pad's output must feed only the Conv and not be a network output. Runs with constant
// folding on (the optimization switch), before conv_fusion (250), which then sees a plain Conv.
#include <algorithm>

#include "../common/pass_ints.h"
#include "graph/passes/fusion_util.h"
#include "pad.h"

namespace opforge::graph {
namespace {

Status foldPadsIntoConvs(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int p = ctx.order[step];
    if (!m.is(p, "ai.onnx::Pad")) continue;
    const Node& pn = g.nodes[p];
    if (pn.attrs.get<std::string>("mode") != "constant") continue;
    const auto& in = pn.inputs;
    std::optional<std::vector<int64_t>> pads, axes = std::vector<int64_t>{};
    if (in.size() > 1 && in[1] >= 0)
      pads = ops::knownInts(g, in[1]);
    else if (pn.attrs.has("pads"))
      pads = pn.attrs.get<std::vector<int64_t>>("pads");
    if (in.size() > 3 && in[3] >= 0) axes = ops::knownInts(g, in[3]);
    if (!pads || !axes) continue;
    if (in.size() > 2 && in[2] >= 0) {  // constant_value: only a zero pads as a Conv does
      const auto v = m.scalar(in[2]);
      if (!v || *v != 0.0) continue;
    } else if (pn.attrs.has("value") && pn.attrs.get<double>("value") != 0.0) {
      continue;
    }
    const int x = in[0];
    const int rank = static_cast<int>(g.values[x].dims.size());
    if (rank < 3) continue;
    const auto pe = ops::expandPads(*pads, *axes, rank);
    if (!pe) continue;  // the shape rule has said why
    const auto& [b, e] = *pe;
    if (b[0] || e[0] || b[1] || e[1]) continue;  // batch and channels are not a Conv's to pad
    if (std::any_of(b.begin(), b.end(), [](int64_t v) { return v < 0; }) ||
        std::any_of(e.begin(), e.end(), [](int64_t v) { return v < 0; }))
      continue;  // a crop
    const int c = m.soleConsumer(m.out(p));
    if (!m.is(c, "ai.onnx::Conv") || g.nodes[c].inputs[0] != m.out(p)) continue;
    if (g.nodes[c].guards != pn.guards) continue;
    AttrMap attrs = g.nodes[c].attrs;
    if (attrs.get<std::string>("auto_pad") != "NOTSET") continue;
    const int nd = rank - 2;
    std::vector<int64_t> cp(2 * nd, 0);
    if (attrs.has("pads")) cp = attrs.get<std::vector<int64_t>>("pads");
    if (static_cast<int>(cp.size()) != 2 * nd) continue;  // the Conv's shape rule will say why
    for (int i = 0; i < nd; ++i) {
      cp[i] += b[2 + i];
      cp[nd + i] += e[2 + i];
    }
    attrs.set("pads", AttrValue(cp));
    std::vector<int> conv_in = g.nodes[c].inputs;
    conv_in[0] = x;
    if (m.tryReplace(g.nodes[c].op, attrs, conv_in, {p, c}, c, "pad_conv_fusion"))
      ++ctx.counters["zero Pads folded into Convs"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(pad_conv_fusion, 240, foldPadsIntoConvs);

}  // namespace opforge::graph
