// CUDA tactics of opforge::DeformableAggregation. Both are gathers: every output element is
// written by one thread (tactic 1) or reduced by one thread from a fixed set of partial sums
// (tactic 2), in a fixed order, in fp32 — no atomics, bit-identical between runs.
//   1 cuda.thread_vec    — one thread per (b, a, vector of V channels); loops over every
//                          (p, cam, l) sample computing its bilinear corners itself.
//   2 cuda.block_staged  — one block of 256 threads per (b, a): its threads first compute the
//                          geometry of the anchor's samples (256 at a time) into shared memory,
//                          keeping the valid ones in order; then threads (slice, channel vector)
//                          sum a strided share of the valid samples; slices are added in order.
//   3 cuda.block_staged128 — the same with 128-thread blocks (fewer slices, more resident blocks:
//                          Sparse4D's 900 anchors fit one wave of an H200).
// V = 16 bytes of channels when a group's channels and the pointers allow (4 fp32, 8 fp16/bf16).
// Locations and weights are fp32 in every combination; accumulation is fp32.
#include "../../common/int_fit.h"
#include "deformable_aggregation.cuh"

namespace opforge::contrib {

namespace cu {

__global__ void daValidateTables(const int32_t* __restrict__ sp, const int32_t* __restrict__ st,
                                 int n, int64_t F, int* __restrict__ flag, DeviceErrorRecord* rec) {
  __shared__ int first;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t H = sp[2 * i], W = sp[2 * i + 1], s = st[i];
    if (H < 0 || W < 0 || s < 0 || s + H * W > F) atomicMin(&first, i);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  *flag = first == INT_MAX ? -1 : first;
  if (first == INT_MAX) return;
  const int i = first;
  const int64_t H = sp[2 * i], W = sp[2 * i + 1], s = st[i];
  if (H < 0 || W < 0)
    reportDeviceError(rec, kDeviceErrorNegative, kDaSpatial, H < 0 ? H : W,
                      2 * int64_t(i) + (H < 0 ? 0 : 1), 0, 0);
  else  // rows [s, s + H W) of mc_ms_feat (axis 1, F rows)
    reportDeviceError(rec, kDeviceErrorRegion, kDaStart, s, i, F, 1, H * W, kDaFeat);
}

Status daLaunchValidation(const Tensor& spatial, const Tensor& start, int64_t F, int* flag,
                          DeviceErrorRecord* rec, cudaStream_t s) {
  const int64_t n = start.numel();
  if (n > INT_MAX)
    return Status::unsupported("DeformableAggregation: more than 2^31 (camera, level) entries");
  daValidateTables<<<1, 256, 0, s>>>(spatial.as<const int32_t>(), start.as<const int32_t>(),
                                     static_cast<int>(n), F, flag, rec);
  return ops::lastLaunch("DeformableAggregation table validation");
}

}  // namespace cu

namespace {
using cu::ChanVec;

struct DaArgs {
  const void* feat;
  const int32_t* sp;
  const int32_t* st;
  const float* loc;
  const float* w;
  void* out;
  const int* flag;
  int64_t B, F, C, A, nvec;  // nvec = C / V
  int32_t P, Ncam, L, G, cpg;
};

template <typename T, int V>
__device__ __forceinline__ void fillNaN(T* out) {
  float v[V];
#pragma unroll
  for (int e = 0; e < V; ++e) v[e] = __int_as_float(0x7fffffff);
  cu::storeChan<T, V>(out, v);
}

// acc += wt * bilinear sample of the V channels at `fb` (the batch's features, offset by the
// vector's first channel) for level (H, W, s).
template <typename T, int V>
__device__ __forceinline__ void sampleAcc(float (&acc)[V], const T* fb, int64_t C, float u, float v,
                                          int H, int W, int s, float wt) {
  const cu::DaGeom g = cu::daGeom(u, v, H, W);
  const bool xin0 = g.x0 >= 0 && g.x0 < W, xin1 = g.x0 + 1 >= 0 && g.x0 + 1 < W;
  const bool yin0 = g.y0 >= 0 && g.y0 < H, yin1 = g.y0 + 1 >= 0 && g.y0 + 1 < H;
  const bool in[4] = {yin0 && xin0, yin0 && xin1, yin1 && xin0, yin1 && xin1};
  const float cw[4] = {(1.f - g.ay) * (1.f - g.ax), (1.f - g.ay) * g.ax, g.ay * (1.f - g.ax),
                       g.ay * g.ax};
  const int64_t r0 = int64_t(s) + int64_t(g.y0) * W + g.x0;
  const int64_t rows[4] = {r0, r0 + 1, r0 + W, r0 + W + 1};
  ChanVec<T, V> cv[4];
#pragma unroll
  for (int q = 0; q < 4; ++q)
    if (in[q]) cv[q].w = cu::loadChan<T, V>(fb + rows[q] * C);
#pragma unroll
  for (int q = 0; q < 4; ++q)
    if (in[q]) {
      const float f = wt * cw[q];
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = fmaf(f, ops::DNum<T>::loadBits(cv[q].b[e]), acc[e]);
    }
}

// ---- Tactic 1: one thread per (b, a, channel vector) ------------------------------------------

template <typename T, int V>
__global__ void __launch_bounds__(256) daThreadKernel(const DaArgs a) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= a.B * a.A * a.nvec) return;
  const int64_t ba = t / a.nvec;
  const int64_t k0 = (t % a.nvec) * V;
  T* out = static_cast<T*>(a.out) + ba * a.C + k0;
  if (*a.flag >= 0) {
    fillNaN<T, V>(out);
    return;
  }
  const int64_t b = ba / a.A;
  const T* fb = static_cast<const T*>(a.feat) + b * a.F * a.C + k0;
  const int grp = static_cast<int>(k0 / a.cpg);
  const float* loc = a.loc + ba * a.P * a.Ncam * 2;
  const float* w = a.w + ba * a.P * a.Ncam * a.L * a.G + grp;
  float acc[V] = {};
  for (int pc = 0; pc < a.P * a.Ncam; ++pc) {
    const float u = loc[2 * pc], v = loc[2 * pc + 1];
    if (!cu::daValidF(u, v)) continue;
    const int cam = pc % a.Ncam;
#pragma unroll 2
    for (int l = 0; l < a.L; ++l) {
      const int e = cam * a.L + l;
      sampleAcc<T, V>(acc, fb, a.C, u, v, __ldg(a.sp + 2 * e), __ldg(a.sp + 2 * e + 1),
                      __ldg(a.st + e), w[(int64_t(pc) * a.L + l) * a.G]);
    }
  }
  cu::storeChan<T, V>(out, acc);
}

// ---- Tactic 2: one block per (b, a), staged sample geometry -----------------------------------

// kBlock threads per block; also the samples staged per round.
template <typename T, int V, int kBlock>
__global__ void __launch_bounds__(kBlock) daBlockKernel(const DaArgs a) {
  __shared__ int
      s_r0[kBlock];  // row of corner (y0, x0) inside the batch's features (may be virtual)
  __shared__ int s_w[kBlock];  // W: the row step from y0 to y0 + 1
  __shared__ int
      s_widx[kBlock];  // (pc * L + l): the sample's weights are w[(ba * PcL + widx) * G + grp]
  __shared__ unsigned char s_in[kBlock];  // bit q: corner q inside the level
  __shared__ float4 s_cw[kBlock];         // the four corner weights
  __shared__ int s_count[kBlock / 32];
  __shared__ float s_red[kBlock * 8];  // slice partial sums (slices * C floats, <= kBlock * V)

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t ba = blockIdx.x;
  T* out = static_cast<T*>(a.out) + ba * a.C;
  if (*a.flag >= 0) {
    for (int64_t cv = tid; cv < a.nvec; cv += kBlock) fillNaN<T, V>(out + cv * V);
    return;
  }
  const int64_t b = ba / a.A;
  const T* fb = static_cast<const T*>(a.feat) + b * a.F * a.C;
  const float* loc = a.loc + ba * a.P * a.Ncam * 2;
  const int pcl = a.P * a.Ncam * a.L;
  const float* wb = a.w + ba * int64_t(pcl) * a.G;
  // Phase-2 roles: `slices` threads per channel vector when C is narrow, else passes over C.
  const int64_t nvec = a.nvec;
  const int slices = nvec >= kBlock ? 1 : static_cast<int>(kBlock / nvec);
  for (int64_t pass0 = 0; pass0 < nvec; pass0 += kBlock) {
    const int64_t cv = pass0 + (nvec >= kBlock ? tid : tid % nvec);
    const int slice = nvec >= kBlock ? 0 : tid / static_cast<int>(nvec);
    const bool active = cv < nvec && slice < slices;
    const int grp = active ? static_cast<int>(cv * V / a.cpg) : 0;
    float acc[V] = {};
    for (int j0 = 0; j0 < pcl; j0 += kBlock) {
      // Phase 1: sample j0 + tid.
      const int j = j0 + tid;
      bool keep = false;
      int r0 = 0, W = 0;
      unsigned char in = 0;
      float4 cw = make_float4(0.f, 0.f, 0.f, 0.f);
      if (j < pcl) {
        const int l = j % a.L, pc = j / a.L, cam = pc % a.Ncam;
        const float u = loc[2 * pc], v = loc[2 * pc + 1];
        if (cu::daValidF(u, v)) {
          const int H = __ldg(a.sp + 2 * (cam * a.L + l));
          W = __ldg(a.sp + 2 * (cam * a.L + l) + 1);
          const int s = __ldg(a.st + cam * a.L + l);
          const cu::DaGeom g = cu::daGeom(u, v, H, W);
          const bool xin0 = g.x0 >= 0 && g.x0 < W, xin1 = g.x0 + 1 < W;  // x0 >= -1
          const bool yin0 = g.y0 >= 0 && g.y0 < H, yin1 = g.y0 + 1 < H;  // y0 >= -1
          in = (yin0 && xin0) | ((yin0 && xin1) << 1) | ((yin1 && xin0) << 2) |
               ((yin1 && xin1) << 3);
          r0 = s + g.y0 * W + g.x0;
          cw = make_float4((1.f - g.ay) * (1.f - g.ax), (1.f - g.ay) * g.ax, g.ay * (1.f - g.ax),
                           g.ay * g.ax);
          keep = in != 0;
        }
      }
      const unsigned ballot = __ballot_sync(0xffffffffu, keep);
      if (lane == 0) s_count[warp] = __popc(ballot);
      __syncthreads();
      int base = 0, total = 0;
#pragma unroll
      for (int k = 0; k < kBlock / 32; ++k) {
        base += k < warp ? s_count[k] : 0;
        total += s_count[k];
      }
      if (keep) {
        const int pos = base + __popc(ballot & ((1u << lane) - 1u));
        s_r0[pos] = r0;
        s_w[pos] = W;
        s_widx[pos] = j;
        s_in[pos] = in;
        s_cw[pos] = cw;
      }
      __syncthreads();
      // Phase 2: this thread's share of the valid samples.
      if (active) {
        const T* fv = fb + cv * V;
        for (int i = slice; i < total; i += slices) {
          const int rr = s_r0[i], ww = s_w[i];
          const unsigned m = s_in[i];
          const float4 c4 = s_cw[i];
          const float wt = __ldg(wb + int64_t(s_widx[i]) * a.G + grp);
          const int64_t rows[4] = {rr, rr + 1, int64_t(rr) + ww, int64_t(rr) + ww + 1};
          const float cwq[4] = {c4.x, c4.y, c4.z, c4.w};
          ChanVec<T, V> c[4];
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (m & (1u << q)) c[q].w = cu::loadChan<T, V>(fv + rows[q] * a.C);
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (m & (1u << q)) {
              const float f = wt * cwq[q];
#pragma unroll
              for (int e = 0; e < V; ++e)
                acc[e] = fmaf(f, ops::DNum<T>::loadBits(c[q].b[e]), acc[e]);
            }
        }
      }
      __syncthreads();  // the staged samples are overwritten next round
    }
    if (slices == 1) {
      if (active) cu::storeChan<T, V>(out + cv * V, acc);
      continue;
    }
    if (active)
#pragma unroll
      for (int e = 0; e < V; ++e) s_red[(int64_t(slice) * nvec + cv) * V + e] = acc[e];
    __syncthreads();
    if (tid < nvec) {
      float sum[V] = {};
      for (int sl = 0; sl < slices; ++sl)
#pragma unroll
        for (int e = 0; e < V; ++e) sum[e] += s_red[(int64_t(sl) * nvec + tid) * V + e];
      cu::storeChan<T, V>(out + tid * V, sum);
    }
  }
}

// Calls f(std::integral_constant<int, V>{}) for the runtime V (1, 2, 4 or 8 within 16 bytes of T).
template <typename T, typename F>
Status byVec(int v, F&& f) {
  switch (v) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      if constexpr (sizeof(T) <= 2) return f(std::integral_constant<int, 8>{});
      [[fallthrough]];
    default:
      return Status::internal("DeformableAggregation: bad vector width");
  }
}

bool daApplies(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  if (!ops::inTypeSet(in[kDaFeat].dtype, cu::kDaFeatTypes)) return false;
  if (in[kDaLoc].dtype != DataType::kFloat32 || in[kDaWeights].dtype != DataType::kFloat32)
    return false;
  const DaSizes z = daSizes(in);
  // Rows, samples per anchor and per-anchor sample indices are int32 in the kernels.
  // (cuda.thread_vec launches a thread per output vector without a grid-stride loop: B*A*C/256
  // blocks at most; the group and channels-per-group are int32 kernel arguments.)
  return z.F < INT_MAX && ops::productBelow({2, z.P, z.Ncam, z.L}, ops::kI32Limit) &&
         ops::productBelow({2, z.Ncam, z.L}, ops::kI32Limit) &&
         ops::productBelow({z.B, z.A}, ops::kI32Limit) &&
         ops::productBelow({z.B, z.A, z.C}, int64_t{1} << 39) && z.G > 0 && z.G < INT_MAX &&
         z.C % z.G == 0 && z.channelsPerGroup() < INT_MAX;
}

size_t daWorkspace(const AttrMap&, std::span<const TensorDesc>, std::span<const TensorDesc>) {
  return cu::kDaFlagBytes;
}

enum class Mapping { kThread, kBlock256, kBlock128 };

Status daRun(Mapping mapping, KernelContext& ctx, std::span<const Tensor> in,
             std::span<const Tensor> out) {
  const DaSizes z = daSizes(in);
  cudaStream_t s = ops::streamOf(ctx);
  if (out[0].numel() == 0) return Status::ok();
  if (ctx.workspaceSize() < cu::kDaFlagBytes || !ctx.workspace())
    return Status::internal("DeformableAggregation: workspace too small");
  int* flag = static_cast<int*>(ctx.workspace());
  OPFORGE_RETURN_IF_ERROR(
      cu::daLaunchValidation(in[kDaSpatial], in[kDaStart], z.F, flag, ctx.errorRecord(), s));
  return ops::visitDevice<cu::kDaFeatTypes>(
      in[kDaFeat].desc.dtype, "DeformableAggregation", [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        const int v = cu::daPickVec<T>(z.channelsPerGroup(), {in[kDaFeat].data, out[0].data});
        return byVec<T>(v, [&](auto vc) -> Status {
          constexpr int V = decltype(vc)::value;
          DaArgs a{in[kDaFeat].data,
                   in[kDaSpatial].as<const int32_t>(),
                   in[kDaStart].as<const int32_t>(),
                   in[kDaLoc].as<const float>(),
                   in[kDaWeights].as<const float>(),
                   out[0].data,
                   flag,
                   z.B,
                   z.F,
                   z.C,
                   z.A,
                   z.C / V,
                   static_cast<int32_t>(z.P),
                   static_cast<int32_t>(z.Ncam),
                   static_cast<int32_t>(z.L),
                   static_cast<int32_t>(z.G),
                   static_cast<int32_t>(z.channelsPerGroup())};
          if (mapping == Mapping::kThread) {
            const int64_t threads = z.B * z.A * a.nvec;
            daThreadKernel<T, V><<<static_cast<unsigned>((threads + 255) / 256), 256, 0, s>>>(a);
            return ops::lastLaunch("DeformableAggregation cuda.thread_vec");
          }
          if (mapping == Mapping::kBlock256) {
            daBlockKernel<T, V, 256><<<static_cast<unsigned>(z.B * z.A), 256, 0, s>>>(a);
            return ops::lastLaunch("DeformableAggregation cuda.block_staged");
          }
          daBlockKernel<T, V, 128><<<static_cast<unsigned>(z.B * z.A), 128, 0, s>>>(a);
          return ops::lastLaunch("DeformableAggregation cuda.block_staged128");
        });
      });
}
}  // namespace

OPFORGE_TACTICS("opforge::DeformableAggregation", [](OpDef& d) {
  d.tactic(
      1, "cuda.thread_vec",
      [](KernelContext& c, std::span<const Tensor> i, std::span<const Tensor> o) {
        return daRun(Mapping::kThread, c, i, o);
      },
      daApplies, daWorkspace);
  d.tactic(
      2, "cuda.block_staged",
      [](KernelContext& c, std::span<const Tensor> i, std::span<const Tensor> o) {
        return daRun(Mapping::kBlock256, c, i, o);
      },
      daApplies, daWorkspace);
  d.tactic(
      3, "cuda.block_staged128",
      [](KernelContext& c, std::span<const Tensor> i, std::span<const Tensor> o) {
        return daRun(Mapping::kBlock128, c, i, o);
      },
      daApplies, daWorkspace);
});

}  // namespace opforge::contrib
