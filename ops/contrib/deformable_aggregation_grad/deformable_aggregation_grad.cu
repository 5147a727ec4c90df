// CUDA tactic of opforge::DeformableAggregationGrad.
//   1 cuda.warp_point — one warp per sampling point (b, a, p, cam), lanes over channels.
//     grad_weights and grad_sampling_location are gathers: per-lane partial sums in a fixed order,
//     then a fixed butterfly reduction — deterministic. grad_mc_ms_feat is a scatter: fp32
//     atomicAdd into the output (FP32) or into an fp32 workspace converted afterwards (FP16/BF16);
//     its last bits depend on the order the atomics land in (not bit-identical between runs).
#include "../../common/int_fit.h"
#include "../deformable_aggregation/deformable_aggregation.cuh"

namespace opforge::contrib {

namespace {

struct DaGradArgs {
  const void* feat;
  const int32_t* sp;
  const int32_t* st;
  const float* loc;
  const float* w;
  const void* gout;
  float* gfeat;  // fp32 accumulator [B, F, C] (the output itself for FP32 features)
  float* gloc;
  float* gw;
  const int* flag;
  int64_t B, F, C, A, points;  // points = B * A * P * Ncam
  int32_t P, Ncam, L, G, cpg;
};

constexpr int kThreads = 256;
constexpr float kNaN = __builtin_nanf("");

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Zeroes the fp32 feature-gradient accumulator, or fills it with NaN when the tables were bad.
__global__ void initGradFeat(float* __restrict__ g, int64_t n, const int* __restrict__ flag) {
  const float v = *flag >= 0 ? kNaN : 0.f;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    g[i] = v;
}

template <typename T>
__global__ void finishGradFeat(const float* __restrict__ acc, T* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    reinterpret_cast<typename ops::DNum<T>::Bits*>(out)[i] = ops::DNum<T>::storeBits(acc[i]);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) daGradKernel(const DaGradArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t pt = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) >> 5;
  if (pt >= a.points) return;  // whole warps leave together
  float* gw = a.gw + pt * a.L * a.G;
  if (*a.flag >= 0) {
    for (int i = lane; i < a.L * a.G; i += 32) gw[i] = kNaN;
    if (lane < 2) a.gloc[2 * pt + lane] = kNaN;
    return;
  }
  const float u = a.loc[2 * pt], v = a.loc[2 * pt + 1];
  if (!cu::daValidF(u, v)) {
    for (int i = lane; i < a.L * a.G; i += 32) gw[i] = 0.f;
    if (lane < 2) a.gloc[2 * pt + lane] = 0.f;
    return;
  }
  const int cam = static_cast<int>(pt % a.Ncam);
  const int64_t ba = pt / (int64_t(a.P) * a.Ncam), b = ba / a.A;
  const auto* feat = reinterpret_cast<const typename ops::DNum<T>::Bits*>(a.feat) + b * a.F * a.C;
  const auto* go = reinterpret_cast<const typename ops::DNum<T>::Bits*>(a.gout) + ba * a.C;
  float* gf = a.gfeat + b * a.F * a.C;
  const float* wp = a.w + pt * a.L * a.G;
  float gx = 0.f, gy = 0.f;
  for (int l = 0; l < a.L; ++l) {
    const int e = cam * a.L + l;
    const int H = __ldg(a.sp + 2 * e), W = __ldg(a.sp + 2 * e + 1), s = __ldg(a.st + e);
    const cu::DaGeom g = cu::daGeom(u, v, H, W);
    const bool xin0 = g.x0 >= 0 && g.x0 < W, xin1 = g.x0 + 1 < W;  // x0 >= -1 for a valid point
    const bool yin0 = g.y0 >= 0 && g.y0 < H, yin1 = g.y0 + 1 < H;
    const bool in[4] = {yin0 && xin0, yin0 && xin1, yin1 && xin0, yin1 && xin1};
    const float cw[4] = {(1.f - g.ay) * (1.f - g.ax), (1.f - g.ay) * g.ax, g.ay * (1.f - g.ax),
                         g.ay * g.ax};
    const int64_t r0 = int64_t(s) + int64_t(g.y0) * W + g.x0;
    const int64_t rows[4] = {r0, r0 + 1, r0 + W, r0 + W + 1};
    for (int grp = 0; grp < a.G; ++grp) {
      const float wt = wp[l * a.G + grp];
      float gsum = 0.f;
      for (int64_t k = int64_t(grp) * a.cpg + lane; k < int64_t(grp + 1) * a.cpg; k += 32) {
        const float gk = ops::DNum<T>::loadBits(go[k]);
        float val[4];
#pragma unroll
        for (int q = 0; q < 4; ++q)
          val[q] = in[q] ? ops::DNum<T>::loadBits(feat[rows[q] * a.C + k]) : 0.f;
        const float bil = cw[0] * val[0] + cw[1] * val[1] + cw[2] * val[2] + cw[3] * val[3];
        const float dx = (1.f - g.ay) * (val[1] - val[0]) + g.ay * (val[3] - val[2]);
        const float dy = (1.f - g.ax) * (val[2] - val[0]) + g.ax * (val[3] - val[1]);
        const float gwt = gk * wt;
        gsum = fmaf(gk, bil, gsum);
        gx = fmaf(static_cast<float>(W) * gwt, dx, gx);
        gy = fmaf(static_cast<float>(H) * gwt, dy, gy);
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (in[q]) atomicAdd(gf + rows[q] * a.C + k, cw[q] * gwt);
      }
      gsum = warpSum(gsum);
      if (lane == 0) gw[l * a.G + grp] = gsum;
    }
  }
  gx = warpSum(gx);
  gy = warpSum(gy);
  if (lane == 0) {
    a.gloc[2 * pt] = gx;
    a.gloc[2 * pt + 1] = gy;
  }
}

bool gradApplies(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  if (!ops::inTypeSet(in[kDaFeat].dtype, cu::kDaFeatTypes)) return false;
  if (in[kDaLoc].dtype != DataType::kFloat32 || in[kDaWeights].dtype != DataType::kFloat32)
    return false;
  const DaSizes z = daSizes(in);
  // int32 in the kernels: L * G (weight rows), 2 * Ncam * L (sample indices), P, C / G.
  return z.G > 0 && z.C % z.G == 0 &&
         ops::productBelow({z.B, z.A, z.P, z.Ncam}, int64_t{1} << 33) &&
         ops::productBelow({z.L, z.G}, ops::kI32Limit) &&
         ops::productBelow({2, z.Ncam, z.L}, ops::kI32Limit) && z.P < INT_MAX &&
         z.channelsPerGroup() < INT_MAX;
}

size_t gradFeatScratch(const TensorDesc& feat) {
  return feat.dtype == DataType::kFloat32
             ? 0
             : (static_cast<size_t>(feat.numel()) * 4 + 255) / 256 * 256;
}

size_t gradWorkspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return cu::kDaFlagBytes + gradFeatScratch(in[kDaFeat]);
}

Status daGrad(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const DaSizes z = daSizes(in);
  cudaStream_t s = ops::streamOf(ctx);
  const int64_t nfeat = out[0].numel(), points = z.B * z.A * z.P * z.Ncam;
  if (nfeat == 0 && points == 0) return Status::ok();
  if (ctx.workspaceSize() < cu::kDaFlagBytes + gradFeatScratch(in[kDaFeat].desc) ||
      !ctx.workspace())
    return Status::internal("DeformableAggregationGrad: workspace too small");
  auto* ws = static_cast<uint8_t*>(ctx.workspace());
  int* flag = reinterpret_cast<int*>(ws);
  OPFORGE_RETURN_IF_ERROR(
      cu::daLaunchValidation(in[kDaSpatial], in[kDaStart], z.F, flag, ctx.errorRecord(), s));
  return ops::visitDevice<cu::kDaFeatTypes>(
      in[kDaFeat].desc.dtype, "DeformableAggregationGrad", [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        float* gfeat = std::is_same_v<T, float> ? out[0].as<float>()
                                                : reinterpret_cast<float*>(ws + cu::kDaFlagBytes);
        if (nfeat > 0) {
          initGradFeat<<<cu::gridFill(initGradFeat, nfeat, kThreads), kThreads, 0, s>>>(
              gfeat, nfeat, flag);
          OPFORGE_RETURN_IF_ERROR(ops::lastLaunch("DeformableAggregationGrad init"));
        }
        if (points > 0) {
          DaGradArgs a{in[kDaFeat].data,
                       in[kDaSpatial].as<const int32_t>(),
                       in[kDaStart].as<const int32_t>(),
                       in[kDaLoc].as<const float>(),
                       in[kDaWeights].as<const float>(),
                       in[kDaGradOut].data,
                       gfeat,
                       out[1].as<float>(),
                       out[2].as<float>(),
                       flag,
                       z.B,
                       z.F,
                       z.C,
                       z.A,
                       points,
                       static_cast<int32_t>(z.P),
                       static_cast<int32_t>(z.Ncam),
                       static_cast<int32_t>(z.L),
                       static_cast<int32_t>(z.G),
                       static_cast<int32_t>(z.channelsPerGroup())};
          const int64_t blocks = (points * 32 + kThreads - 1) / kThreads;
          daGradKernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(a);
          OPFORGE_RETURN_IF_ERROR(ops::lastLaunch("DeformableAggregationGrad cuda.warp_point"));
        }
        if constexpr (!std::is_same_v<T, float>) {
          if (nfeat > 0) {
            finishGradFeat<T><<<cu::gridFill(finishGradFeat<T>, nfeat, kThreads), kThreads, 0, s>>>(
                gfeat, out[0].as<T>(), nfeat);
            OPFORGE_RETURN_IF_ERROR(ops::lastLaunch("DeformableAggregationGrad convert"));
          }
        }
        return Status::ok();
      });
}
}  // namespace

OPFORGE_TACTICS("opforge::DeformableAggregationGrad", [](OpDef& d) {
  d.tactic(1, "cuda.warp_point", daGrad, gradApplies, gradWorkspace);
});

}  // namespace opforge::contrib
