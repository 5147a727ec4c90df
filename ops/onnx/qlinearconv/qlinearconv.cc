// ONNX QLinearConv (opset 10): y = saturate(round_half_even((conv(x - x_zero_point,
// w - w_zero_point) + B) * x_scale * w_scale / y_scale) + y_zero_point), with Conv's geometry.
// x, w and y are INT8 or UINT8, each its own; the scales are FP32; x's and y's scale and zero
// point are per tensor, w's per tensor or 1-D per output channel ([M]); B is INT32 [M], quantized
// with scale x_scale * w_scale and zero point 0. The multiplier is rounded in FP32 after each step
// as ONNX's reference rounds it, the product in FP32 as ONNX Runtime and TensorRT round it
// (common/qlinear.h).
#include "qlinearconv.h"
#include "../conv/conv_cpu.h"

namespace opforge::ops {

OPFORGE_OP(QLinearConv, "ai.onnx::QLinearConv")
    .kind("conv")
    .doc("Quantized convolution: 8-bit input, weights and output with scales and zero points.")
    .input("x", "(N, C, D1, ...)")
    .input("x_scale", "scalar")
    .input("x_zero_point", "scalar")
    .input("w", "(M, C / group, k1, ...)")
    .input("w_scale", "scalar, or [M]: per output channel")
    .input("w_zero_point", "the shape of w_scale")
    .input("y_scale", "scalar")
    .input("y_zero_point", "scalar; its type is y's")
    .optionalInput("B", "INT32 [M]")
    .output("y")
    .with(qReluAttr)
    .with(windowAttrs)
    .attr<int64_t>("group", int64_t{1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc x = c.input(0), w = c.input(3);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'x'", x.dtype, kQ8));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'w'", w.dtype, kQ8));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, convOutDims(c, x, w));
      const DataType f = DataType::kFloat32;
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 1, "x_scale", f, 0, std::nullopt, ""));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 2, "x_zero_point", x.dtype, 0, std::nullopt, ""));
      const char* per = "[M] (per output channel)";
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 4, "w_scale", f, 0, w.dim(0), per));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 5, "w_zero_point", w.dtype, 0, w.dim(0), per));
      OPFORGE_RETURN_IF_ERROR(sameCount(c, 4, 5, "w_scale", "w_zero_point"));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 6, "y_scale", f, 0, std::nullopt, ""));
      const DataType yt = c.input(7).dtype;
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'y_zero_point'", yt, kQ8));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 7, "y_zero_point", yt, 0, std::nullopt, ""));
      if (c.hasInput(8)) OPFORGE_RETURN_IF_ERROR(checkConvBias(c, 8, w, DataType::kInt32));
      return SymDesc::make(yt, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_RETURN_IF_ERROR(qlinearConvCounts(in));
      const Tensor &x = in[0], &w = in[3], &y = out[0];
      OPFORGE_ASSIGN_OR_RETURN(ConvGeom g, convGeom(k.attrs(), x.desc, w.desc, y.desc));
      F64Tensor xd(x.desc.dims), wd(w.desc.dims), acc(y.desc.dims);
      minusZeroPoint(x, readInts(in[2]), 1, xd);
      const int64_t m = w.desc.dims[0], per_m = w.numel() / std::max<int64_t>(1, m);
      minusZeroPoint(w, readInts(in[5]), per_m, wd);
      std::optional<F64Tensor> bias;
      if (hasIn(in, 8)) {
        bias.emplace(in[8].desc.dims);
        minusZeroPoint(in[8], {}, 1, *bias);
      }
      OPFORGE_RETURN_IF_ERROR(
          convCpu(g, xd.t, wd.t, bias ? &bias->t : nullptr, acc.t, "QLinearConv"));
      const auto sw = readDoubles(in[4]);
      OPFORGE_ASSIGN_OR_RETURN(
          const auto mult,
          qMultipliers(readDoubles(in[1]), sw, readDoubles(in[6])[0], DataType::kFloat32));
      const double zy = static_cast<double>(readInts(in[7])[0]);
      const double floor = k.attr<int64_t>("_relu") != 0 ? zy : -1e300;
      const int64_t plane = g.op, nw = static_cast<int64_t>(sw.size());
      for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t ch = nw == 1 ? 0 : (i / plane) % m;
        storeFromDouble(y.data, y.desc.dtype, i,
                        requantize(acc.v[i], mult[ch], zy, y.desc.dtype, floor));
      }
      return Status::ok();
    });

}  // namespace opforge::ops
