// CUDA tactic of ai.onnx::Split: one launch cuts up to 16 outputs out of the input's rows (the
// output shapes give the part sizes), in the widest unit the widths allow.
#include "../common/kernel_axis.h"
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {
Status splitCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int r = x.desc.rank();
  OPFORGE_ASSIGN_OR_RETURN(const int axis, kernelAxis(k.attr<int64_t>("axis"), r));
  int64_t total = 0;
  std::vector<void*> parts;
  std::vector<int64_t> widths;
  for (const Tensor& y : out) {
    total += y.desc.dims[axis];
    parts.push_back(y.data);
    widths.push_back(prodOf(y.desc.dims, axis, r));
  }
  if (total != x.desc.dims[axis])
    return Status::invalid("the split sizes add up to " + std::to_string(total) +
                           ", not the input's dimension " + std::to_string(x.desc.dims[axis]));
  return launchConcatSplit(x.data, parts, widths, prodOf(x.desc.dims, 0, axis),
                           dtypeSize(x.desc.dtype), true, streamOf(k), "Split");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Split",
                [](OpDef& d) { d.tactic(1, "cuda.rows", splitCuda, linearOnly); });

}  // namespace opforge::ops
