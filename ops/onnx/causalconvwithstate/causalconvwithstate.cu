// CUDA tactic of ai.onnx::CausalConvWithState, cuda.direct: a thread per element of output (its K
// products summed in float, in double for FP64; bias; rounded to the type; SiLU on the rounded
// value) and per element of present_state (a copy from past_state or input), one launch for both.
#include "causalconvwithstate.h"

#include <type_traits>

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

template <typename S>
__global__ void causalConvKernel(const S* __restrict__ x, const S* __restrict__ w,
                                 const S* __restrict__ bias, const S* __restrict__ past,
                                 S* __restrict__ y, S* __restrict__ state, CausalConvGeom g) {
  using C = typename DNum<S>::C;
  using A = std::conditional_t<std::is_same_v<S, double>, double, float>;
  const int64_t ns = g.k - 1, rows = g.batch * g.channels, ny = rows * g.length,
                total = ny + rows * ns, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    if (e < ny) {
      const int64_t bc = e / g.length, t = e - bc * g.length, ch = bc % g.channels;
      A acc = 0;
      // Padded positions t .. t + K - 1; those below ns come from past_state (zeros without it).
      for (int64_t j = 0; j < g.k; ++j) {
        const int64_t p = t + j;
        A v = 0;
        if (p >= ns)
          v = static_cast<A>(DNum<S>::load(x[bc * g.length + p - ns]));
        else if (past)
          v = static_cast<A>(DNum<S>::load(past[bc * ns + p]));
        acc += static_cast<A>(DNum<S>::load(w[ch * g.k + j])) * v;
      }
      if (bias) acc += static_cast<A>(DNum<S>::load(bias[ch]));
      S out = DNum<S>::store(static_cast<C>(acc));
      if (g.silu) {
        const A v = static_cast<A>(DNum<S>::load(out));
        A e;
        if constexpr (std::is_same_v<A, double>)
          e = exp(-v);
        else
          e = expf(-v);
        out = DNum<S>::store(static_cast<C>(v / (A(1) + e)));
      }
      y[e] = out;
    } else {
      const int64_t f = e - ny, bc = f / ns, p = g.length + (f - bc * ns);
      state[f] = p >= ns ? x[bc * g.length + p - ns]
                 : past  ? past[bc * ns + p]
                         : DNum<S>::store(static_cast<C>(0));
    }
  }
}

Status causalConvCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const CausalConvGeom g =
      causalConvGeom(k.attrs(), in[0].desc, in[1].desc, present(in, 2), present(in, 3));
  const int64_t total = out[0].numel() + out[1].numel();
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "CausalConvWithState", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    causalConvKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data),
        g.bias ? static_cast<const S*>(in[2].data) : nullptr,
        g.past ? static_cast<const S*>(in[3].data) : nullptr, static_cast<S*>(out[0].data),
        static_cast<S*>(out[1].data), g);
    return launched("CausalConvWithState");
  });
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::CausalConvWithState",
                [](OpDef& d) { d.tactic(1, "cuda.direct", causalConvCuda, linearOnly); });

}  // namespace opforge::ops
