// slice_constant_params: a Slice whose starts, ends and axes are constants and whose steps are 1
// (or absent) takes them as attributes (Slice's opset-1 form) instead of inputs. Its CUDA tactic
// then resolves the slice on the host and copies 16-byte units with 32-bit index arithmetic
// (movement.cuh's launchStridedCopy), where the input form must read the values on the device and
// index each element in 64 bits: Swin-T's window shifts (Slice + Concat, from torch.roll) took
// about 7x their memory floor that way. The CPU kernel reads either form. Runs with constant
// folding on (the optimization switch), after the passes that match Slice chains.
#include <algorithm>

#include "../common/util.h"
#include "graph/passes/fusion_util.h"

namespace opforge::graph {
namespace {

// The integer values of constant input v, or nullopt (not a constant, not INT32/INT64).
std::optional<std::vector<int64_t>> constInts(const Graph& g, int v) {
  if (v < 0 || !g.values[v].constant) return std::nullopt;
  const TensorValue& c = *g.values[v].constant;
  const DataType t = c.desc.dtype;
  if (t != DataType::kInt64 && t != DataType::kInt32) return std::nullopt;
  if (c.data.size() < static_cast<size_t>(c.desc.numel()) * dtypeSize(t)) return std::nullopt;
  return ops::readInts(Tensor{c.desc, const_cast<uint8_t*>(c.data.data()), Device::kCpu});
}

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
    if (in.size() < 3 || in[1] < 0 || in[2] < 0) continue;  // the attribute form already
    const auto starts = constInts(g, in[1]), ends = constInts(g, in[2]);
    const auto axes =
        in.size() > 3 && in[3] >= 0 ? constInts(g, in[3]) : std::optional<std::vector<int64_t>>();
    if (!starts || !ends || (in.size() > 3 && in[3] >= 0 && !axes)) continue;
    if (in.size() > 4 && in[4] >= 0) {
      const auto steps = constInts(g, in[4]);
      if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; }))
        continue;
    }
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
