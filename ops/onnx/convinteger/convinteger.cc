// ONNX ConvInteger (opset 10): y = conv(x - x_zero_point, w - w_zero_point) as INT32, with
// Conv's geometry (strides, dilations, pads / auto_pad, group; no bias). x and w are INT8 or UINT8,
// each its own; x_zero_point is per tensor, w_zero_point per tensor or 1-D per output channel
// ([M]), each of its operand's type. The products accumulate exactly on Conv's FP64 reference
// (common/qlinear.h) and wrap to 32 bits.
#include "convinteger.h"
#include "../conv/conv_cpu.h"

namespace opforge::ops {

OPFORGE_OP(ConvInteger, "ai.onnx::ConvInteger")
    .kind("conv")
    .doc("Integer convolution of 8-bit operands minus their zero points, as INT32.")
    .input("x", "(N, C, D1, ...)")
    .input("w", "(M, C / group, k1, ...)")
    .optionalInput("x_zero_point", "scalar")
    .optionalInput("w_zero_point", "scalar, or [M]: per output channel")
    .output("y")
    .with(windowAttrs)
    .attr<int64_t>("group", int64_t{1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc x = c.input(0), w = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'x'", x.dtype, kQ8));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'w'", w.dtype, kQ8));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, convOutDims(c, x, w));
      if (c.hasInput(2))
        OPFORGE_RETURN_IF_ERROR(checkQParam(c, 2, "x_zero_point", x.dtype, 0, std::nullopt, ""));
      if (c.hasInput(3))
        OPFORGE_RETURN_IF_ERROR(
            checkQParam(c, 3, "w_zero_point", w.dtype, 0, w.dim(0), "[M] (per output channel)"));
      return SymDesc::make(DataType::kInt32, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_RETURN_IF_ERROR(convIntegerCounts(in));
      const Tensor &x = in[0], &w = in[1], &y = out[0];
      OPFORGE_ASSIGN_OR_RETURN(ConvGeom g, convGeom(k.attrs(), x.desc, w.desc, y.desc));
      F64Tensor xd(x.desc.dims), wd(w.desc.dims), acc(y.desc.dims);
      minusZeroPoint(x, hasIn(in, 2) ? readInts(in[2]) : std::vector<int64_t>{}, 1, xd);
      minusZeroPoint(w, hasIn(in, 3) ? readInts(in[3]) : std::vector<int64_t>{},
                     w.numel() / std::max<int64_t>(1, w.desc.dims[0]), wd);
      OPFORGE_RETURN_IF_ERROR(convCpu(g, xd.t, wd.t, nullptr, acc.t, "ConvInteger"));
      for (int64_t i = 0; i < y.numel(); ++i)  // INT32 (any type of an edited plan stays in bounds)
        storeFromDouble(y.data, y.desc.dtype, i, wrapInt32(acc.v[i]));
      return Status::ok();
    });

}  // namespace opforge::ops
