// ONNX QuantizeLinear (opsets 10-23): y = saturate(round(x / scale) + zero_point), rounding half to
// even, saturating to the output type's range. Per-tensor, per-axis (`axis`) and blocked
// (`block_size`, opset 21) scales (common/quantize.h). The output type is the zero point's, else
// `output_dtype`, else UINT8; INT8, UINT8, INT16 and UINT16, and on the CPU FP8 E4M3FN / E5M2:
// y = fp8(x / scale), rounded to nearest even, saturated unless `saturate` is 0, the zero point
// not added (ONNX's reference; it must be 0). The 4-bit and FNUZ types are not opforge types.
// x / scale is computed in FP32 (FP64 for FP64 inputs), as ONNX's reference does. A constant zero
// scale is a build error.
#include <cmath>

#include "../common/quantize.h"

namespace opforge::ops {
namespace {
DataType quantOutType(const AttrMap& a, DataType zp) {
  if (zp != DataType::kUndefined) return zp;
  const int64_t t = a.get<int64_t>("output_dtype");
  return t ? static_cast<DataType>(t) : DataType::kUInt8;
}
}  // namespace

OPFORGE_OP(QuantizeLinear, "ai.onnx::QuantizeLinear")
    .kind("quantize")
    .doc("Linear quantization to an integer type.")
    .input("x")
    .valueInput("y_scale", false, "read at build time when constant (a zero scale is an error)")
    .optionalInput("y_zero_point")
    .output("y")
    .attr<int64_t>("axis", int64_t{1})
    .attr<int64_t>("block_size", int64_t{0})
    .attr<int64_t>("output_dtype", int64_t{0})
    .attr<int64_t>("saturate", int64_t{1}, "float8 outputs: 1 saturates, 0 gives NaN / inf")
    .optionalAttr<int64_t>("precision", "opset 23: precision of x / scale; FP32 is used")
    .check([](const AttrMap& a) -> Status {
      const int64_t t = a.get<int64_t>("output_dtype");
      if (t != 0 && !inTypeSet(static_cast<DataType>(t), kQuantTypes | kFp8))
        return Status::unsupported("attribute 'output_dtype' = " + std::to_string(t) +
                                   " is not a type opforge quantizes to (INT8, UINT8, INT16, "
                                   "UINT16, FP8E4M3, FP8E5M2)");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'x'", x.dtype, kFloats | kI32));
      OPFORGE_RETURN_IF_ERROR(checkQuantParams(c, x, c.attr<int64_t>("block_size")));
      DataType zt = DataType::kUndefined;
      if (c.hasInput(2)) {
        zt = c.input(2).dtype;
        OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'y_zero_point'", zt, kQuantTypes | kFp8));
        const int64_t od = c.attr<int64_t>("output_dtype");
        if (od != 0 && static_cast<DataType>(od) != zt)
          return c.error("input 'y_zero_point' has type " + dtypeName(zt) +
                         " but attribute 'output_dtype' asks for " +
                         dtypeName(static_cast<DataType>(od)));
      }
      SymDesc y = x.like();
      y.dtype = quantOutType(c.attrs(), zt);
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &s = in[1], &y = out[0];
      const bool has_zp = hasIn(in, 2);
      const QuantLayout q =
          quantLayout(x.desc, s.desc, k.attr<int64_t>("axis"), k.attr<int64_t>("block_size"));
      const auto scale = readDoubles(s);
      // An FP8 zero point must be 0 and is not read as integers (NaN bits: a fuzzer finding).
      const bool fp8 = inTypeSet(y.desc.dtype, kFp8);
      OPFORGE_ASSIGN_OR_RETURN(const std::vector<int64_t> zp,
                               quantZeroPoints(in, fp8, "y_zero_point' of an FP8 y"));
      const bool f64 = x.desc.dtype == DataType::kFloat64;
      if (fp8) {
        const bool sat = k.attr<int64_t>("saturate") != 0;
        for (int64_t o = 0, i = 0; o < q.outer; ++o)
          for (int64_t a = 0; a < q.n; ++a)
            for (int64_t r = 0; r < q.inner; ++r, ++i) {
              const int64_t si = o * q.so + (a / q.bs) * q.sa + r * q.si;
              const double v = loadAsDouble(x.data, x.desc.dtype, i);
              const double d =
                  f64 ? v / scale[si]
                      : static_cast<double>(static_cast<float>(v) / static_cast<float>(scale[si]));
              static_cast<uint8_t*>(y.data)[i] = fp8FromDouble(d, y.desc.dtype, sat);
            }
        return Status::ok();
      }
      return visitTypes<kQuantTypes>(y.desc.dtype, "QuantizeLinear", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const double lo = static_cast<double>(std::numeric_limits<S>::min()),
                     hi = static_cast<double>(std::numeric_limits<S>::max());
        auto* py = static_cast<S*>(y.data);
        for (int64_t o = 0, i = 0; o < q.outer; ++o)
          for (int64_t a = 0; a < q.n; ++a)
            for (int64_t r = 0; r < q.inner; ++r, ++i) {
              const int64_t si = o * q.so + (a / q.bs) * q.sa + r * q.si;
              const double v = loadAsDouble(x.data, x.desc.dtype, i);
              // The quotient rounded to FP32 (FP64 inputs: FP64), then to the nearest even.
              const double d = f64 ? std::nearbyint(v / scale[si])
                                   : std::nearbyint(static_cast<double>(
                                         static_cast<float>(v) / static_cast<float>(scale[si])));
              const double z = std::isnan(d) ? 0 : d + static_cast<double>(has_zp ? zp[si] : 0);
              py[i] = static_cast<S>(std::min(hi, std::max(lo, z)));
            }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
