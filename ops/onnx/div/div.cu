// CUDA tactic of ai.onnx::Div: one broadcasting elementwise pass. Integer inputs first get a scan
// of the divisor: a zero is a run-time error (opforge/device_error.h), and the quotient there is 0.
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct DivF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) {
      if (y == C(0)) return C(0);
      if constexpr (std::is_signed_v<C>)
        if (y == C(-1))
          return static_cast<C>(0 -
                                static_cast<std::make_unsigned_t<C>>(x));  // no INT_MIN / -1 trap
    }
    return static_cast<C>(x / y);
  }
};

Status divCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return visitDevice<kNumeric>(in[0].desc.dtype, "Div", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<S>)
      OPFORGE_RETURN_IF_ERROR(checkNoZero<S>(in[1], k.errorRecord(), 1, streamOf(k), "Div"));
    return launchBinary<S, S, S>(in[0], in[1], out[0], Adapt2<S, S, S, DivF>{DivF{}}, streamOf(k),
                                 "Div");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Div", [](OpDef& d) { d.tactic(1, "cuda.broadcast", divCuda); });

}  // namespace opforge::ops
