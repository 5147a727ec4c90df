// CUDA tactic of ai.onnx::Range: y[i] = start + i * delta in the compute type, start and delta read
// on the device (the element count comes from the planned output).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
template <typename S>
__global__ void rangeKernel(const S* __restrict__ start, const S* __restrict__ delta,
                            S* __restrict__ y, int64_t n) {
  using C = typename DNum<S>::C;
  const C s = DNum<S>::load(*start), d = DNum<S>::load(*delta);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = DNum<S>::store(static_cast<C>(s + static_cast<C>(i) * d));
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Range", [](OpDef& d) {
  d.tactic(1, "cuda.fill",
           [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
             if (out[0].numel() == 0) return Status::ok();
             return visitDevice<kFloats | kSigned>(
                 out[0].desc.dtype, "Range", [&](auto tag) -> Status {
                   using S = typename decltype(tag)::type;
                   rangeKernel<S><<<blocksFor(out[0].numel()), kThreads, 0, streamOf(k)>>>(
                       static_cast<const S*>(in[0].data), static_cast<const S*>(in[2].data),
                       static_cast<S*>(out[0].data), out[0].numel());
                   return launched("Range");
                 });
           });
});

}  // namespace opforge::ops
