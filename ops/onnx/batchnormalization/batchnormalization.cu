// CUDA tactic of ai.onnx::BatchNormalization: a per-channel kernel computes
// a = scale / sqrt(var + eps) and b = B - mean * a in double (the statistics may have any float
// type), then one elementwise pass y = x * a[c] + b[c], in double like the reference. In training
// mode (training_mode = 1) mean and var are the batch statistics: a block per channel sums over N
// and the spatial axes in double, in two passes (the mean, then the centred squares) as the
// reference, and writes the running_mean / running_var outputs when the node has them.
#include <cub/block/block_reduce.cuh>

#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
__global__ void bnPrepKernel(const void* scale, int ts, const void* bias, int tb, const void* mean,
                             int tm, const void* var, int tv, int64_t ch, double eps, double* ab) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < ch;
       c += int64_t(gridDim.x) * blockDim.x) {
    const double a = loadFloatAny(scale, ts, c) / ::sqrt(loadFloatAny(var, tv, c) + eps);
    ab[2 * c] = a;
    ab[2 * c + 1] = loadFloatAny(bias, tb, c) - loadFloatAny(mean, tm, c) * a;
  }
}

struct Stat {
  const void* p;
  int t;
};
__device__ __forceinline__ void storeFloatAny(void* p, int dtype, int64_t i, double v) {
  switch (dtype) {
    case 1:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case 11:
      static_cast<double*>(p)[i] = v;
      break;
    case 10:
      static_cast<__half*>(p)[i] = __double2half(v);
      break;
    case 16:
      static_cast<__nv_bfloat16*>(p)[i] = __double2bfloat16(v);
      break;
    default:
      break;
  }
}

struct TrainArgs {
  Stat scale, bias, mean, var;
  void* run_mean;  // nullptr: not written
  int run_mean_t;
  void* run_var;
  int run_var_t;
  int64_t n, ch, sp;
  double eps, momentum;
};

// A block per channel: batch mean and (biased) variance in double, then a and b.
template <typename S>
__global__ void __launch_bounds__(kThreads)
    bnTrainStatsKernel(const S* __restrict__ x, TrainArgs g, double* __restrict__ ab) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ double bcast;
  const int64_t per = g.n * g.sp;
  for (int64_t c = blockIdx.x; c < g.ch; c += gridDim.x) {
    double sum = 0;
    for (int64_t t = threadIdx.x; t < per; t += blockDim.x) {
      const int64_t b = t / g.sp, i = t - b * g.sp;
      sum += static_cast<double>(DNum<S>::load(x[(b * g.ch + c) * g.sp + i]));
    }
    sum = Reduce(tmp).Sum(sum);
    if (threadIdx.x == 0) bcast = sum / static_cast<double>(per);
    __syncthreads();
    const double mean = bcast;
    double sq = 0;
    for (int64_t t = threadIdx.x; t < per; t += blockDim.x) {
      const int64_t b = t / g.sp, i = t - b * g.sp;
      const double d = static_cast<double>(DNum<S>::load(x[(b * g.ch + c) * g.sp + i])) - mean;
      sq += d * d;
    }
    __syncthreads();  // tmp is reused
    sq = Reduce(tmp).Sum(sq);
    if (threadIdx.x == 0) {
      const double var = sq / static_cast<double>(per);
      const double a = loadFloatAny(g.scale.p, g.scale.t, c) / ::sqrt(var + g.eps);
      ab[2 * c] = a;
      ab[2 * c + 1] = loadFloatAny(g.bias.p, g.bias.t, c) - mean * a;
      if (g.run_mean)
        storeFloatAny(g.run_mean, g.run_mean_t, c,
                      loadFloatAny(g.mean.p, g.mean.t, c) * g.momentum + mean * (1 - g.momentum));
      if (g.run_var)
        storeFloatAny(g.run_var, g.run_var_t, c,
                      loadFloatAny(g.var.p, g.var.t, c) * g.momentum + var * (1 - g.momentum));
    }
    __syncthreads();  // bcast and tmp are reused by the next channel
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    bnApplyKernel(const S* __restrict__ x, S* __restrict__ y, const double* __restrict__ ab,
                  int64_t n, int64_t ch, int64_t sp) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t c = (i / sp) % ch;
    const double v = static_cast<double>(DNum<S>::load(x[i])) * ab[2 * c] + ab[2 * c + 1];
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
  }
}

Status bnCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t ch = x.desc.dims[1],
                sp = std::max<int64_t>(prodOf(x.desc.dims, 2, x.desc.rank()), 1);
  if (x.numel() == 0) return Status::ok();
  auto* ab = static_cast<double*>(k.workspace());
  cudaStream_t st = streamOf(k);
  auto t = [&](int i) { return static_cast<int>(in[i].desc.dtype); };
  const bool training = k.attr<int64_t>("training_mode") == 1;
  if (!training) {
    bnPrepKernel<<<blocksFor(ch), kThreads, 0, st>>>(in[1].data, t(1), in[2].data, t(2), in[3].data,
                                                     t(3), in[4].data, t(4), ch,
                                                     k.attr<double>("epsilon"), ab);
    OPFORGE_RETURN_IF_ERROR(launched("BatchNormalization"));
  }
  return visitDevice<kFloats>(x.desc.dtype, "BatchNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if (training) {
      TrainArgs g{};
      g.scale = {in[1].data, t(1)};
      g.bias = {in[2].data, t(2)};
      g.mean = {in[3].data, t(3)};
      g.var = {in[4].data, t(4)};
      if (out.size() > 1 && out[1].numel() > 0) {
        g.run_mean = out[1].data;
        g.run_mean_t = static_cast<int>(out[1].desc.dtype);
      }
      if (out.size() > 2 && out[2].numel() > 0) {
        g.run_var = out[2].data;
        g.run_var_t = static_cast<int>(out[2].desc.dtype);
      }
      g.n = x.desc.dims[0];
      g.ch = ch;
      g.sp = prodOf(x.desc.dims, 2, x.desc.rank());
      g.eps = k.attr<double>("epsilon");
      g.momentum = k.attr<double>("momentum");
      bnTrainStatsKernel<S>
          <<<static_cast<unsigned>(std::min<int64_t>(ch, 132 * 16)), kThreads, 0, st>>>(
              static_cast<const S*>(x.data), g, ab);
      OPFORGE_RETURN_IF_ERROR(launched("BatchNormalization"));
    }
    bnApplyKernel<S><<<blocksFor(x.numel()), kThreads, 0, st>>>(
        static_cast<const S*>(x.data), static_cast<S*>(out[0].data), ab, x.numel(), ch, sp);
    return launched("BatchNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::BatchNormalization", [](OpDef& d) {
  d.tactic(
      1, "cuda.affine", bnCuda, linearOnly,
      [](const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) -> size_t {
        return sizeof(double) * 2 * static_cast<size_t>(std::max<int64_t>(in[0].dims[1], 1));
      });
});

}  // namespace opforge::ops
