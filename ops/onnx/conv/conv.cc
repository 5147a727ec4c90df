// ONNX Conv: N-D grouped convolution (cross-correlation) with strides, dilations and padding.
// The reference is a direct loop accumulating in double; FP32 also has the fast path im2col +
// sgemm (OpenBLAS when available), used unless naive kernels are requested (common/gemm.h).
#include "../common/combos.h"
#include "conv_cpu.h"

namespace opforge::ops {
OPFORGE_OP(Conv, "ai.onnx::Conv")
    .kind("conv")
    .doc("N-D grouped convolution.")
    .combos(comboTypes(kFloats))
    // Channels-last: only the CUDA tactics of hwcConvTactics() take it.
    .combo(Combo("FP32|FP16|BF16", "HWC").tactics(hwcConvTactics()))
    .input("X", "(N, C, D1, ...)")
    .input("W", "(M, C / group, k1, ...)")
    .optionalInput("B", "(M)")
    .output("Y")
    .with(windowAttrs)
    .attr<int64_t>("group", int64_t{1})
    .check([](const AttrMap& a) -> Status {
      if (a.get<int64_t>("group") < 1)
        return Status::invalid("attribute 'group' must be >= 1, got " +
                               std::to_string(a.get<int64_t>("group")));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> { return convShape(c); })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_ASSIGN_OR_RETURN(ConvGeom g,
                               convGeom(k.attrs(), in[0].desc, in[1].desc, out[0].desc));
      return convCpu(g, in[0], in[1], hasIn(in, 2) ? &in[2] : nullptr, out[0], "Conv");
    });
}  // namespace opforge::ops
