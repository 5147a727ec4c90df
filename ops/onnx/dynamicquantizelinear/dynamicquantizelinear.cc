// ONNX DynamicQuantizeLinear (opset 11): FP32 x quantized to UINT8 with a scale and zero point
// computed from the data:
//   lo = min(0, min(x)), hi = max(0, max(x)), y_scale = (hi - lo) / 255 (1 / 255 when hi == lo),
//   y_zero_point = rint(clamp(0 - lo / y_scale, 0, 255)),
//   y = clamp(rint(x / y_scale) + y_zero_point, 0, 255)
// in FP32 with rounding half to even (the ONNX reference; dynamicquantizelinear.h). NaN inputs are
// skipped by the minimum and maximum.
#include "dynamicquantizelinear.h"

#include <algorithm>

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(DynamicQuantizeLinear, "ai.onnx::DynamicQuantizeLinear")
    .doc("Quantizes FP32 to UINT8 with a scale and zero point computed from the data.")
    .input("x", "FP32")
    .output("y", "UINT8, x's shape")
    .output("y_scale", "FP32 scalar")
    .output("y_zero_point", "UINT8 scalar")
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'x'", x.dtype, kF32));
      return std::vector<SymDesc>{SymDesc::make(DataType::kUInt8, x.dims),
                                  SymDesc::make(DataType::kFloat32, {}),
                                  SymDesc::make(DataType::kUInt8, {})};
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const auto* px = static_cast<const float*>(in[0].data);
      const int64_t n = in[0].numel();
      float lo = 0, hi = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(px[i])) continue;
        lo = std::min(lo, px[i]);
        hi = std::max(hi, px[i]);
      }
      const DqlParams p = dqlParams(lo, hi);
      auto* py = static_cast<uint8_t*>(out[0].data);
      for (int64_t i = 0; i < n; ++i) py[i] = dqlQuantize(px[i], p);
      *static_cast<float*>(out[1].data) = p.scale;
      *static_cast<uint8_t*>(out[2].data) = static_cast<uint8_t>(p.zero_point);
      return Status::ok();
    });

}  // namespace opforge::ops
