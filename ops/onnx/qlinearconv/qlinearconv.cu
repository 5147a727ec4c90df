// CUDA tactic of ai.onnx::QLinearConv: common/qlinear_cuda.cuh's direct convolution, one thread
// per output element, exact 32-bit accumulation with the INT32 bias, requantized as the CPU
// reference.
#include "../common/qlinear_cuda.cuh"
#include "qlinearconv.h"

namespace opforge::ops {
namespace {

Status qlinearConvCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_RETURN_IF_ERROR(qlinearConvCounts(in));
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(k.attrs(), in[0].desc, in[3].desc, out[0].desc));
  a.x = in[0].data, a.w = in[3].data, a.y = out[0].data;
  QParams q;
  q.sa = in[1].data, q.za = in[2].data;
  q.sb = in[4].data, q.nsb = in[4].numel();
  q.zb = in[5].data, q.nzb = in[5].numel();
  q.sy = in[6].data, q.zy = in[7].data;
  q.relu = k.attr<int64_t>("_relu") != 0;
  q.ts = DataType::kFloat32, q.ty = out[0].desc.dtype;
  return qconvCuda(a, present(in, 8) ? in[8].data : nullptr, in[0].desc.dtype, in[3].desc.dtype, q,
                   streamOf(k), k.errorRecord(), "QLinearConv");
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::QLinearConv",
                [](OpDef& d) { d.tactic(1, "cuda.direct", qlinearConvCuda, linearOnly); });

}  // namespace opforge::ops
