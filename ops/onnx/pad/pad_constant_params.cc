// pad_constant_params: a Pad whose pads are all zero copies its input unchanged, whatever its
// mode; it is dropped and its readers read the input. torchvision's Swin Transformer pads every
// window attention's input and every patch merging's to a multiple of the window (of 2) — with
// zeros at 224x224, 15 full-tensor copies a forward (0.12 ms each at batch 32 on an H100, FP16).
// Otherwise a Pad whose pads (and axes) are known numbers takes them as its attribute (Pad's
// opset-2 form, one begin and one end per axis): its CUDA tactic then resolves the geometry on the
// host and copies the block behind the last padded axis in 16-byte units with 32-bit index
// arithmetic, where the input form reads the pads on the device and indexes each element.
// Runs with constant folding on (the optimization switch), once the pads are folded.
#include <algorithm>

#include "../common/pass_ints.h"
#include "graph/passes/fusion_util.h"
#include "pad.h"

namespace opforge::graph {
namespace {

Status padConstantParams(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int n = ctx.order[step];
    if (!m.is(n, "ai.onnx::Pad")) continue;
    const Node& node = g.nodes[n];
    std::optional<std::vector<int64_t>> pads;
    if (node.inputs.size() > 1 && node.inputs[1] >= 0)
      pads = ops::knownInts(g, node.inputs[1]);
    else if (node.attrs.has("pads"))
      pads = node.attrs.get<std::vector<int64_t>>("pads");
    if (!pads) continue;
    if (std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; }) &&
        m.bypass(n, "pad_constant_params")) {
      ++ctx.counters["zero Pads dropped"];
      continue;
    }
    if (node.inputs.size() < 2 || node.inputs[1] < 0) continue;  // the attribute form already
    std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{};
    if (node.inputs.size() > 3 && node.inputs[3] >= 0) axes = ops::knownInts(g, node.inputs[3]);
    if (!axes) continue;
    const int rank = static_cast<int>(g.values[node.inputs[0]].dims.size());
    const auto pe = ops::expandPads(*pads, *axes, rank);
    if (!pe) continue;  // the shape rule has said why
    std::vector<int64_t> full = pe->first;
    full.insert(full.end(), pe->second.begin(), pe->second.end());
    AttrMap attrs = node.attrs;
    attrs.set("pads", AttrValue(full));
    const int cv = node.inputs.size() > 2 ? node.inputs[2] : -1;
    if (m.tryReplace(node.op, attrs, {node.inputs[0], -1, cv}, {n}, n, "pad_constant_params"))
      ++ctx.counters["Pad parameters made attributes"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(pad_constant_params, 865, padConstantParams);

}  // namespace opforge::graph
