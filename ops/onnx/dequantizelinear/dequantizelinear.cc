// ONNX DequantizeLinear (opsets 10-23): y = (x - zero_point) * scale, in FP32 (FP64 for an FP64
// scale), stored as the scale's type (or `output_dtype`, opset 23). x is INT8, UINT8, INT16,
// UINT16 or INT32 (INT32 without a zero point other than INT32), or on the CPU FP8 E4M3FN / E5M2
// (whose zero point must be 0, as ONNX's reference requires); the zero point has x's type.
// Per-tensor, per-axis and blocked scales (common/quantize.h). A constant zero scale is a build
// error.
#include "../common/quantize.h"

namespace opforge::ops {

OPFORGE_OP(DequantizeLinear, "ai.onnx::DequantizeLinear")
    .kind("quantize")
    .doc("Linear dequantization of an integer tensor.")
    .input("x")
    .valueInput("x_scale", false, "read at build time when constant (a zero scale is an error)")
    .optionalInput("x_zero_point")
    .output("y")
    .attr<int64_t>("axis", int64_t{1})
    .attr<int64_t>("block_size", int64_t{0})
    .attr<int64_t>("output_dtype", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'x'", x.dtype, kQuantTypes | kI32 | kFp8));
      OPFORGE_RETURN_IF_ERROR(checkQuantParams(c, x, c.attr<int64_t>("block_size")));
      if (c.hasInput(2) && c.input(2).dtype != x.dtype)
        return c.error("input 'x_zero_point' has type " + dtypeName(c.input(2).dtype) +
                       ", not the type of input 'x' (" + dtypeName(x.dtype) + ")");
      SymDesc y = x.like();
      y.dtype = c.input(1).dtype;
      if (const int64_t od = c.attr<int64_t>("output_dtype"); od != 0) {
        if (static_cast<DataType>(od) != y.dtype)
          return c.error("attribute 'output_dtype' " + dtypeName(static_cast<DataType>(od)) +
                         " differs from the type of input 'x_scale' (" + dtypeName(y.dtype) + ")");
      }
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &s = in[1], &y = out[0];
      const bool has_zp = hasIn(in, 2);
      const QuantLayout q =
          quantLayout(x.desc, s.desc, k.attr<int64_t>("axis"), k.attr<int64_t>("block_size"));
      const auto scale = readDoubles(s);
      const bool fp8 = inTypeSet(x.desc.dtype, kFp8);
      OPFORGE_ASSIGN_OR_RETURN(const std::vector<int64_t> zp,
                               quantZeroPoints(in, fp8, "x_zero_point' of an FP8 x"));
      return visitTypes<kFloats>(y.desc.dtype, "DequantizeLinear", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        auto* py = mutPtr<N>(y);
        for (int64_t o = 0, i = 0; o < q.outer; ++o)
          for (int64_t a = 0; a < q.n; ++a)
            for (int64_t r = 0; r < q.inner; ++r, ++i) {
              const int64_t si = o * q.so + (a / q.bs) * q.sa + r * q.si;
              // (x - zp) as the compute type (FP32, or FP64), then times the scale; an FP8 x is its
              // value (its zero point is 0).
              const double xv = loadAsDouble(x.data, x.desc.dtype, i);
              const C diff = fp8 ? static_cast<C>(xv)
                                 : static_cast<C>(static_cast<C>(static_cast<int64_t>(xv)) -
                                                  static_cast<C>(has_zp ? zp[si] : int64_t{0}));
              py[i] = N::store(static_cast<C>(diff * static_cast<C>(scale[si])));
            }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
