// CUDA tactic of example::circ_pad_plugin_grad.
//   1 cuda.gather — one thread per input-gradient element summing, in a fixed order, the output
//                   gradient at every position that wraps onto it (per padded axis the positions
//                   s + before + k·n inside the output): no atomics, deterministic.
#include "../../common/cuda_utils.cuh"
#include "../circ_pad/circ_pad.h"
#include "../common/vec.cuh"

namespace opforge::contrib {

namespace {
constexpr int kMaxRank = 8;

struct GradArgs {
  int rank;
  int64_t in_dims[kMaxRank], out_dims[kMaxRank], before[kMaxRank], out_strides[kMaxRank];
};

template <typename T>
__global__ void __launch_bounds__(256)
    circPadGradKernel(const T* __restrict__ dy, T* __restrict__ dx, int64_t n, const GradArgs a) {
  using E = ops::DNum<T>;
  using C = typename E::C;
  const auto* gy = reinterpret_cast<const typename E::Bits*>(dy);
  auto* gx = reinterpret_cast<typename E::Bits*>(dx);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t first[kMaxRank], count[kMaxRank];
    int64_t rem = i, total = 1;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      first[d] = 0;
      count[d] = 1;
      if (d < a.rank) {
        const int64_t s = rem % a.in_dims[d];
        rem /= a.in_dims[d];
        first[d] = (s + a.before[d]) % a.in_dims[d];  // the smallest output coordinate mapping to s
        count[d] = first[d] < a.out_dims[d] ? (a.out_dims[d] - 1 - first[d]) / a.in_dims[d] + 1 : 0;
        total *= count[d];
      }
    }
    C sum = C(0);
    for (int64_t t = 0; t < total; ++t) {
      int64_t r = t, off = 0;
#pragma unroll
      for (int d = kMaxRank - 1; d >= 0; --d)
        if (d < a.rank) {
          const int64_t k = r % count[d];
          r /= count[d];
          off += (first[d] + k * a.in_dims[d]) * a.out_strides[d];
        }
      sum += E::loadBits(gy[off]);
    }
    gx[i] = E::storeBits(sum);
  }
}

bool fits(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return in[0].rank() >= 1 && in[0].rank() <= kMaxRank;
}

Status circPadGradGather(KernelContext& ctx, std::span<const Tensor> in,
                         std::span<const Tensor> out) {
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), out[0].desc.dims);
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  GradArgs a{};
  a.rank = g.rank;
  int64_t s = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    a.in_dims[d] = g.in_dims[d];
    a.out_dims[d] = g.out_dims[d];
    a.before[d] = g.before[d];
    a.out_strides[d] = s;
    s *= g.out_dims[d];
  }
  return ops::visitDevice<ops::kFloats>(
      in[0].desc.dtype, "circ_pad_plugin_grad", [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        circPadGradKernel<T>
            <<<cu::gridFill(circPadGradKernel<T>, n, 256), 256, 0, ops::streamOf(ctx)>>>(
                static_cast<const T*>(in[0].data), static_cast<T*>(out[0].data), n, a);
        return ops::lastLaunch("circ_pad_plugin_grad cuda.gather");
      });
}
}  // namespace

OPFORGE_TACTICS("example::circ_pad_plugin_grad",
                [](OpDef& d) { d.tactic(1, "cuda.gather", circPadGradGather, fits); });

}  // namespace opforge::contrib
