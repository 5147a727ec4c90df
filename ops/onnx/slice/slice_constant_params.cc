// slice_constant_params: a Slice whose steps are 1 (or absent) and whose output is as long as its
// input on every axis is the whole input: it is dropped, its readers read the input (torchvision's
// Swin Transformer crops each window attention's output to the unpadded size: 24 such Slices at
// 224x224). Otherwise a Slice whose starts, ends and axes are known numbers and whose steps are 1
// takes them as attributes (Slice's opset-1 form) instead of inputs. Its CUDA tactic
// then resolves the slice on the host and copies 16-byte units with 32-bit index arithmetic
// (movement.cuh's launchStridedCopy), where the input form must read the values on the device and
// index each element in 64 bits: Swin-T's window shifts (Slice + Concat, from torch.roll) took
// about 7x their memory floor that way. The CPU kernel reads either form. Runs with constant
// folding on (the optimization switch), after the passes that match Slice chains.
#include <algorithm>

#include "../common/pass_ints.h"
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

Status sliceConstantParams(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  const RegisteredOp* slice = ctx.registry.find("ai.onnx::Slice");
  if (!slice) return Status::ok();
  fusion::Matcher m(ctx);
  Graph& g = ctx.g;
  for (size_t step = 0; step < ctx.order.size(); ++step) {
    const int n = ctx.order[step];
    if (!m.is(n, "ai.onnx::Slice")) continue;
    const auto& in = g.nodes[n].inputs;
    if (in.size() > 4 && in[4] >= 0) {
      const auto steps = ops::knownInts(g, in[4]);
      if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; }))
        continue;
    }
    // Steps of 1 and every axis as long as it was: the whole input, in order.
    if (m.bypass(n, "slice_constant_params")) {
      ++ctx.counters["whole-tensor Slices dropped"];
      continue;
    }
    if (in.size() < 3 || in[1] < 0 || in[2] < 0) continue;  // the attribute form already
    const auto starts = ops::knownInts(g, in[1]), ends = ops::knownInts(g, in[2]);
    const auto axes = in.size() > 3 && in[3] >= 0 ? ops::knownInts(g, in[3])
                                                  : std::optional<std::vector<int64_t>>();
    if (!starts || !ends || (in.size() > 3 && in[3] >= 0 && !axes)) continue;
    if (ends->size() != starts->size() || (axes && axes->size() != starts->size())) continue;
    AttrMap attrs = g.nodes[n].attrs;
    attrs.set("starts", AttrValue(*starts));
    attrs.set("ends", AttrValue(*ends));
    if (axes) attrs.set("axes", AttrValue(*axes));
    if (!m.tryReplace(slice, attrs, {in[0]}, {n}, n, "slice_constant_params")) continue;
    ++ctx.counters["Slice parameters made attributes"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(slice_constant_params, 870, sliceConstantParams);

}  // namespace opforge::graph
