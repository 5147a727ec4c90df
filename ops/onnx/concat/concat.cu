// CUDA tactic of ai.onnx::Concat: one launch joins up to 16 inputs row by row, in the widest unit
// (up to 16 bytes) the chunk widths allow; more inputs use one 2-D copy each.
#include "../common/movement.cuh"
#include "concat.h"

namespace opforge::ops {
namespace {
Status concatCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& y = out[0];
  OPFORGE_ASSIGN_OR_RETURN(const ConcatRows c, concatRows(k.attr<int64_t>("axis"), in, y));
  std::vector<void*> parts;
  for (const Tensor& x : in) parts.push_back(x.data);
  return launchConcatSplit(y.data, parts, c.widths, c.outer, dtypeSize(y.desc.dtype), false,
                           streamOf(k), "Concat");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Concat",
                [](OpDef& d) { d.tactic(1, "cuda.rows", concatCuda, linearOnly); });

}  // namespace opforge::ops
