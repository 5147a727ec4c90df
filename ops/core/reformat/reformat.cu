// CUDA tactic of opforge::Reformat: LINEAR <-> HWC (channels-last) transposition and/or a float
// precision change (FP32/FP16/BF16), or a plain copy.
#include "../../common/cuda_utils.cuh"
#include "../../common/device_types.cuh"

namespace opforge::ops {

namespace {
enum class Layout { kSame, kToHwc, kToLinear };

// x viewed as [N, C, S] (LINEAR) <-> [N, S, C] (HWC), S = product of the spatial dims; i indexes y.
template <typename TI, typename TO, Layout L>
__global__ void reformatKernel(const TI* __restrict__ x, TO* __restrict__ y, int64_t n, int64_t c,
                               int64_t s) {
  const int64_t total = n * c * s;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t src = i;
    if (L == Layout::kToHwc) {  // y[b, p, ch] = x[b, ch, p]
      const int64_t ch = i % c, p = (i / c) % s, b = i / (c * s);
      src = (b * c + ch) * s + p;
    } else if (L == Layout::kToLinear) {  // y[b, ch, p] = x[b, p, ch]
      const int64_t p = i % s, ch = (i / s) % c, b = i / (c * s);
      src = (b * s + p) * c + ch;
    }
    if constexpr (std::is_same_v<TI, TO>) {
      y[i] = x[src];
    } else {
      y[i] = DNum<TO>::store(DNum<TI>::load(x[src]));
    }
  }
}

template <typename TI, typename TO>
Status launchTyped(const Tensor& x, const Tensor& y, cudaStream_t st) {
  const auto& d = x.desc.dims;
  const bool transpose = x.desc.format != y.desc.format && x.desc.rank() >= 3;
  int64_t n = 1, c = 1, s = 1;
  if (transpose) {
    n = d[0];
    c = d[1];
    for (size_t a = 2; a < d.size(); ++a) s *= d[a];
  } else {
    s = x.numel();
  }
  const auto* px = static_cast<const TI*>(x.data);
  auto* py = static_cast<TO*>(y.data);
  const unsigned grid = gridFor(x.numel(), 256);
  if (!transpose)
    reformatKernel<TI, TO, Layout::kSame><<<grid, 256, 0, st>>>(px, py, n, c, s);
  else if (y.desc.format == Format::kHWC)
    reformatKernel<TI, TO, Layout::kToHwc><<<grid, 256, 0, st>>>(px, py, n, c, s);
  else
    reformatKernel<TI, TO, Layout::kToLinear><<<grid, 256, 0, st>>>(px, py, n, c, s);
  return lastLaunch("Reformat cuda");
}

constexpr unsigned kReformatFloats = kF32 | kF16 | kBF16;

Status reformatCuda(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  cudaStream_t st = streamOf(ctx);
  if (x.numel() == 0) return Status::ok();
  const bool transpose = x.desc.format != y.desc.format && x.desc.rank() >= 3;
  if (x.desc.dtype == y.desc.dtype) {
    if (!transpose)
      return cudaStatus(cudaMemcpyAsync(y.data, x.data, y.bytes(), cudaMemcpyDeviceToDevice, st),
                        "Reformat copy");
    return visitDeviceBySize(x.desc.dtype, "Reformat", [&](auto tag) {
      using T = typename decltype(tag)::type;
      return launchTyped<T, T>(x, y, st);
    });
  }
  return visitDevice<kReformatFloats>(x.desc.dtype, "Reformat", [&](auto a) {
    return visitDevice<kReformatFloats>(y.desc.dtype, "Reformat", [&](auto b) {
      return launchTyped<typename decltype(a)::type, typename decltype(b)::type>(x, y, st);
    });
  });
}
}  // namespace

OPFORGE_TACTICS("opforge::Reformat", [](OpDef& d) { d.tactic(1, "cuda.reformat", reformatCuda); });

}  // namespace opforge::ops
