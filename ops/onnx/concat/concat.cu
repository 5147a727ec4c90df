// CUDA tactic of ai.onnx::Concat: one launch joins up to 16 inputs row by row, in the widest unit
// (up to 16 bytes) the chunk widths allow; more inputs use one 2-D copy each.
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {
Status concatCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& y = out[0];
  const int r = y.desc.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  const int64_t outer = prodOf(y.desc.dims, 0, axis);
  std::vector<void*> parts;
  std::vector<int64_t> widths;
  for (const Tensor& x : in) {
    parts.push_back(x.data);
    widths.push_back(prodOf(x.desc.dims, axis, r));
  }
  return launchConcatSplit(y.data, parts, widths, outer, dtypeSize(y.desc.dtype), false,
                           streamOf(k), "Concat");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Concat",
                [](OpDef& d) { d.tactic(1, "cuda.rows", concatCuda, linearOnly); });

}  // namespace opforge::ops
