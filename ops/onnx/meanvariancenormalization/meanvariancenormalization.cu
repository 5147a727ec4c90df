// CUDA tactic of ai.onnx::MeanVarianceNormalization, cuda.block: a block per group (the
// coordinates of the kept axes) sums over the reduced axes in double, in two passes (the mean,
// then the centred squares) as the reference, and writes (x - mean) / (sqrt(var) + 1e-9).
#include <cub/block/block_reduce.cuh>

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

// A set of axes: sizes and the input's strides, the innermost last.
struct Axes {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t strides[kMaxDims];
  int64_t count = 1;
  __device__ int64_t offset(int64_t i) const {
    int64_t off = 0;
    for (int a = rank - 1; a >= 0; --a) {
      const int64_t q = i / dims[a];
      off += (i - q * dims[a]) * strides[a];
      i = q;
    }
    return off;
  }
};

template <typename S>
__global__ void __launch_bounds__(kThreads)
    mvnKernel(const S* __restrict__ x, S* __restrict__ y, Axes kept, Axes red) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ double bcast;
  const double per = static_cast<double>(red.count);
  for (int64_t g = blockIdx.x; g < kept.count; g += gridDim.x) {
    const int64_t base = kept.offset(g);
    double sum = 0;
    for (int64_t m = threadIdx.x; m < red.count; m += blockDim.x)
      sum += static_cast<double>(DNum<S>::load(x[base + red.offset(m)]));
    sum = Reduce(tmp).Sum(sum);
    if (threadIdx.x == 0) bcast = sum / per;
    __syncthreads();
    const double mean = bcast;
    double sq = 0;
    for (int64_t m = threadIdx.x; m < red.count; m += blockDim.x) {
      const double d = static_cast<double>(DNum<S>::load(x[base + red.offset(m)])) - mean;
      sq += d * d;
    }
    __syncthreads();  // tmp and bcast are reused
    sq = Reduce(tmp).Sum(sq);
    if (threadIdx.x == 0) bcast = sqrt(sq / per) + 1e-9;
    __syncthreads();
    const double div = bcast;
    for (int64_t m = threadIdx.x; m < red.count; m += blockDim.x) {
      const int64_t at = base + red.offset(m);
      y[at] = DNum<S>::store(static_cast<typename DNum<S>::C>(
          (static_cast<double>(DNum<S>::load(x[at])) - mean) / div));
    }
    __syncthreads();
  }
}

Status mvnCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& d = in[0].desc;
  const int r = d.rank();
  if (r > kMaxDims) return Status::unsupported("MeanVarianceNormalization (CUDA): rank above 10");
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : k.attr<std::vector<int64_t>>("axes")) reduced[wrapAxis(a, r)] = true;
  const auto st = stridesOf(d.dims);
  Axes kept, red;
  for (int a = 0; a < r; ++a) {
    Axes& s = reduced[a] ? red : kept;
    s.dims[s.rank] = d.dims[a];
    s.strides[s.rank] = st[a];
    s.count *= d.dims[a];
    ++s.rank;
  }
  if (d.numel() == 0) return Status::ok();
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(kept.count, 132 * 16));
  return visitDevice<kFloats>(d.dtype, "MeanVarianceNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    mvnKernel<S><<<blocks, kThreads, 0, streamOf(k)>>>(static_cast<const S*>(in[0].data),
                                                       static_cast<S*>(out[0].data), kept, red);
    return launched("MeanVarianceNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::MeanVarianceNormalization",
                [](OpDef& d) { d.tactic(1, "cuda.block", mvnCuda, linearOnly); });

}  // namespace opforge::ops
