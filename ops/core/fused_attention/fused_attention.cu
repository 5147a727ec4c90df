// CUDA tactics of opforge::FusedAttention:
//   1 cuda.fused      one kernel: a block loads one (batch, head)'s K and V into shared memory (as
//                     float) and each warp takes query rows: scores, softmax and the weighted sum
//                     of V without leaving the SM (when K and V fit in 48 KiB); both layouts,
//                     through the views of attention_views.h;
//   2 cuda.composite  scores by a batched GEMM (cuBLASLt, else the tiled kernel) into the
//                     workspace (float for FP16/BF16), the row softmax, the probabilities in the
//                     inputs' type, then the product with V (any size; per head for bshd);
//   3 cuda.flash      FP16 / BF16 on the tensor cores, scores kept in registers with an online
//                     softmax (flash_attention.cuh): head sizes multiples of 8 up to 128, element
//                     strides multiples of 8 (K not transposed); no workspace.
//   4 cuda.cudnn,     FP16 / BF16 through cuDNN's fused attention (attention_cudnn.h), the first
//   5 cuda.cudnn_1    and second engine cuDNN lists that builds; when built with cuDNN's frontend.
// Arithmetic in float (double for FP64).
#include "../../common/int_fit.h"
#include "../../onnx/common/gemm_cuda.h"
#include "../../onnx/common/softmax_cuda.cuh"
#include "attention_cudnn.h"
#include "attention_views.h"
#include "flash_attention.cuh"

namespace opforge::ops {
namespace {

AttnGeom geomOf(const AttrMap& a, std::span<const TensorDesc> in) {
  AttnGeom g =
      attnGeom(a.get<std::string>("layout"), a.get<int64_t>("heads"),
               a.get<int64_t>("k_transposed") != 0, a.get<double>("scale"), in[0], in[1], in[2]);
  attnSetBias(g, a.get<std::string>("layout"), in[0], in.size() > 3 ? &in[3] : nullptr,
              a.get<int64_t>("windows"));
  g.nan_to_zero = a.get<int64_t>("nan_to_zero") != 0;
  return g;
}

// The bias input's data, or null.
const void* biasOf(std::span<const Tensor> in) {
  return in.size() > 3 && in[3].desc.dtype != DataType::kUndefined ? in[3].data : nullptr;
}

constexpr int kWarps = 4, kRowsPerBlock = 16;

template <typename S>
size_t fusedSmem(const AttnGeom& g) {
  const size_t es = std::is_same_v<S, double> ? 8 : 4;
  return es * static_cast<size_t>(g.sk * (g.d + 1) + g.sk * g.dv + kWarps * g.d + kWarps * g.sk);
}

template <typename S>
__global__ void __launch_bounds__(kWarps * 32)
    attentionKernel(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                    const S* __restrict__ bias, S* __restrict__ y, AttnGeom g) {
  using T = SoftT<S>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* K = reinterpret_cast<T*>(smem_raw);
  T* V = K + g.sk * (g.d + 1);
  T* Qs = V + g.sk * g.dv;
  T* P = Qs + kWarps * g.d;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t chunks = (g.sq + kRowsPerBlock - 1) / kRowsPerBlock;
  T* qw = Qs + warp * g.d;
  T* pw = P + warp * g.sk;
  for (int64_t job = blockIdx.x; job < g.B * g.H * chunks; job += gridDim.x) {
    const int64_t bh = job / chunks, r0 = (job % chunks) * kRowsPerBlock;
    const int64_t b = bh / g.H, h = bh - b * g.H;
    __syncthreads();  // the previous job's K and V are no longer read
    for (int64_t e = threadIdx.x; e < g.sk * g.d; e += blockDim.x) {
      const int64_t j = e / g.d, t = e - j * g.d;
      K[j * (g.d + 1) + t] = static_cast<T>(DNum<S>::load(k[attnAt(g.k, b, h, j, t)]));
    }
    for (int64_t e = threadIdx.x; e < g.sk * g.dv; e += blockDim.x) {
      const int64_t j = e / g.dv, c = e - j * g.dv;
      V[e] = static_cast<T>(DNum<S>::load(v[attnAt(g.v, b, h, j, c)]));
    }
    __syncthreads();
    const int64_t brow = bias ? attnBiasRow(g.bias, bh) : 0;  // bh = b * H + h
    for (int64_t i = r0 + warp; i < r0 + kRowsPerBlock && i < g.sq; i += kWarps) {
      for (int64_t t = lane; t < g.d; t += 32)
        qw[t] = static_cast<T>(DNum<S>::load(q[attnAt(g.q, b, h, i, t)]));
      __syncwarp();
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = lane; j < g.sk; j += 32) {
        T dot = 0;
        const T* kr = K + j * (g.d + 1);
        for (int64_t t = 0; t < g.d; ++t) dot += qw[t] * kr[t];
        T s = static_cast<T>(g.scale) * dot;
        if (bias) s += static_cast<T>(DNum<S>::load(bias[brow + i * g.bias.ss + j * g.bias.sk]));
        pw[j] = s;
        m = softMaxOf(m, s);
      }
      m = warpMax(m);
      T sum = 0;
      for (int64_t j = lane; j < g.sk; j += 32) {
        const T e = dm::exp(pw[j] - m);
        pw[j] = e;
        sum += e;
      }
      sum = warpSum(sum);
      __syncwarp();
      for (int64_t c = lane; c < g.dv; c += 32) {
        T acc = 0;
        for (int64_t j = 0; j < g.sk; ++j) acc += pw[j] * V[j * g.dv + c];
        // nan_to_zero: a row whose sum is NaN (a NaN score) or 0 (no key seen) is zeros.
        const T out = g.nan_to_zero && !(sum > T(0)) ? T(0) : acc / sum;
        y[attnAt(g.y, b, h, i, c)] = DNum<S>::store(static_cast<typename DNum<S>::C>(out));
      }
      __syncwarp();
    }
  }
}

std::vector<TensorDesc> descsOf(std::span<const Tensor> in) {
  std::vector<TensorDesc> d;
  for (const auto& t : in) d.push_back(t.desc);
  return d;
}

Status fusedCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto d = descsOf(in);
  const AttnGeom g = geomOf(k.attrs(), d);
  if (out[0].numel() == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "FusedAttention", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    const int64_t jobs = g.B * g.H * ((g.sq + kRowsPerBlock - 1) / kRowsPerBlock);
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(jobs, 132 * 16));
    attentionKernel<S><<<grid, kWarps * 32, fusedSmem<S>(g), streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data),
        static_cast<const S*>(in[2].data), static_cast<const S*>(biasOf(in)),
        static_cast<S*>(out[0].data), g);
    return launched("FusedAttention");
  });
}

bool fusedApplies(const AttrMap& a, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  const AttnGeom g = geomOf(a, in);
  const size_t bytes =
      in[0].dtype == DataType::kFloat64 ? fusedSmem<double>(g) : fusedSmem<float>(g);
  return bytes <= 48 * 1024 && g.sk >= 1;
}

// scores += bias: the scores of head h, batch b at (h * B + b) * Sq * Sk (compositeCuda), the
// bias's flat batch index b * H + h.
template <typename Sc, typename S>
__global__ void addBiasKernel(Sc* __restrict__ scores, const S* __restrict__ bias, AttnGeom g) {
  const int64_t n = g.H * g.B * g.sq * g.sk, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t j = e % g.sk, r = e / g.sk, i = r % g.sq, hb = r / g.sq;
    const int64_t h = hb / g.B, b = hb - h * g.B;
    const auto x =
        DNum<Sc>::load(scores[e]) +
        DNum<S>::load(bias[attnBiasRow(g.bias, b * g.H + h) + i * g.bias.ss + j * g.bias.sk]);
    scores[e] = DNum<Sc>::store(x);
  }
}

// The probabilities in the inputs' type (one rounding of the float softmax), NaN to 0 when asked.
template <typename Sc, typename S>
__global__ void storeProbsKernel(const Sc* __restrict__ p, S* __restrict__ out, int64_t n,
                                 bool nan_to_zero) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    auto x = DNum<Sc>::load(p[e]);
    if (nan_to_zero && x != x) x = 0;
    out[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(x));
  }
}

// The scores are float for FP16/BF16 inputs (gemmComputeType): the softmax sees unrounded scores
// (a BF16 score of magnitude 4 would be off by up to 2^-7, and so would its exponential).
// Composite: scores (workspace) = scale * Q K^T [+ bias], softmax in place, P [NaN to 0] in the
// inputs' type (a second workspace tensor for FP16/BF16, else the scores), Y = P V.
size_t tensorBytes(const AttnGeom& g, DataType t) {
  return (static_cast<size_t>(g.B * g.H * g.sq * g.sk) * dtypeSize(t) + 255) / 256 * 256;
}
size_t probsBytes(const AttnGeom& g, DataType t) {
  return gemmComputeType(t) == t ? 0 : tensorBytes(g, t);
}

// Per head h (H = 1 for bhsd): batched over b at the views' b strides; the scores of head h are
// [B, Sq, Sk] at h * B * Sq * Sk in the workspace.
Status compositeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto d = descsOf(in);
  const AttnGeom g = geomOf(k.attrs(), d);
  if (out[0].numel() == 0) return Status::ok();
  const DataType t = in[0].desc.dtype, st = gemmComputeType(t);
  const int64_t es = static_cast<int64_t>(dtypeSize(t)), ss = static_cast<int64_t>(dtypeSize(st));
  auto at = [&](const void* base, int64_t elems) {
    return static_cast<const uint8_t*>(base) + elems * es;
  };
  uint8_t* scores = static_cast<uint8_t*>(k.workspace());
  uint8_t* probs = st == t ? scores : scores + tensorBytes(g, st);
  const size_t used = tensorBytes(g, st) + probsBytes(g, t);
  void* lt_ws = scores + used;
  const size_t lt_size = k.workspaceSize() - used;
  auto gemm = [&](const GemmArgs& a) -> Status {
    if (a.k > 0 && gemmLtApplies(a, 0)) {
      Status s = gemmLt(a, 0, lt_ws, lt_size, k.stream());
      // No cuBLASLt algorithm for these run-time alignments (a head offset): the tiled kernel.
      if (s.code() != StatusCode::kUnsupported) return s;
    }
    return gemmTiled(a, k.stream());
  };
  const bool kt = k.attrs().get<int64_t>("k_transposed") != 0;  // K given as K^T [d, Sk]
  const int64_t per_head = g.B * g.sq * g.sk;
  for (int64_t h = 0; h < g.H; ++h) {
    GemmArgs s;
    s.dtype = t;
    s.y_dtype = st;
    s.m = g.sq, s.n = g.sk, s.k = g.d;
    s.a = at(in[0].data, g.q.off + h * g.q.sh), s.lda = g.q.ss, s.a_stride = g.q.sb;
    s.b = at(in[1].data, g.k.off + h * g.k.sh), s.tb = !kt, s.ldb = kt ? g.k.st : g.k.ss,
    s.b_stride = g.k.sb;
    s.y = scores + h * per_head * ss, s.ldy = g.sk, s.y_stride = g.sq * g.sk;
    s.batch = g.B;
    s.alpha = g.scale;
    OPFORGE_RETURN_IF_ERROR(gemm(s));
  }
  OPFORGE_RETURN_IF_ERROR(visitDevice<kFloats>(t, "FusedAttention", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    using Sc = std::conditional_t<std::is_same_v<typename DNum<S>::C, float>, float, S>;
    auto* sc = reinterpret_cast<Sc*>(scores);
    if (const void* bias = biasOf(in)) {
      addBiasKernel<Sc, S><<<blocksFor(g.H * g.B * g.sq * g.sk), kThreads, 0, streamOf(k)>>>(
          sc, static_cast<const S*>(bias), g);
      OPFORGE_RETURN_IF_ERROR(launched("FusedAttention bias"));
    }
    const int64_t rows = g.H * g.B * g.sq;
    softmaxKernel<SoftmaxKind::kSoftmax, Sc, SoftMode::kWarp>
        <<<blocksFor(rows * 32), kThreads, 0, streamOf(k)>>>(sc, sc, rows, g.sk, 1);
    OPFORGE_RETURN_IF_ERROR(launched("FusedAttention softmax"));
    if (!std::is_same_v<Sc, S> || g.nan_to_zero) {
      storeProbsKernel<Sc, S><<<blocksFor(rows * g.sk), kThreads, 0, streamOf(k)>>>(
          sc, reinterpret_cast<S*>(probs), rows * g.sk, g.nan_to_zero);
      OPFORGE_RETURN_IF_ERROR(launched("FusedAttention probabilities"));
    }
    return Status::ok();
  }));
  for (int64_t h = 0; h < g.H; ++h) {
    GemmArgs o;
    o.dtype = t;
    o.m = g.sq, o.n = g.dv, o.k = g.sk;
    o.a = probs + h * per_head * es, o.lda = g.sk, o.a_stride = g.sq * g.sk;
    o.b = at(in[2].data, g.v.off + h * g.v.sh), o.ldb = g.v.ss, o.b_stride = g.v.sb;
    o.y = const_cast<uint8_t*>(at(out[0].data, g.y.off + h * g.y.sh)), o.ldy = g.y.ss,
    o.y_stride = g.y.sb;
    o.batch = g.B;
    OPFORGE_RETURN_IF_ERROR(gemm(o));
  }
  return Status::ok();
}

size_t compositeWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                          std::span<const TensorDesc>) {
  const AttnGeom g = geomOf(a, in);
  return tensorBytes(g, gemmComputeType(in[0].dtype)) + probsBytes(g, in[0].dtype) + kLtWorkspace;
}

bool compositeApplies(const AttrMap& a, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
  // The scores of every head are one workspace tensor: its element count must be a tensor's.
  const AttnGeom g = geomOf(a, in);
  return allLinear(in, out) && productBelow({g.B, g.H, g.sq, g.sk}, int64_t{1} << 40);
}

bool flashApplies(const AttrMap& a, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  const DataType t = in[0].dtype;
  return (t == DataType::kFloat16 || t == DataType::kBFloat16) && allLinear(in, out) &&
         flash::applies(geomOf(a, in));
}

Status flashCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const AttnGeom g = geomOf(k.attrs(), descsOf(in));
  if (out[0].numel() == 0) return Status::ok();
  cudaError_t e;
  if (in[0].desc.dtype == DataType::kFloat16) {
    e = flash::launch(
        static_cast<const __half*>(in[0].data), static_cast<const __half*>(in[1].data),
        static_cast<const __half*>(in[2].data), static_cast<const __half*>(biasOf(in)),
        static_cast<__half*>(out[0].data), g, streamOf(k));
  } else {
    e = flash::launch(static_cast<const __nv_bfloat16*>(in[0].data),
                      static_cast<const __nv_bfloat16*>(in[1].data),
                      static_cast<const __nv_bfloat16*>(in[2].data),
                      static_cast<const __nv_bfloat16*>(biasOf(in)),
                      static_cast<__nv_bfloat16*>(out[0].data), g, streamOf(k));
  }
  if (e != cudaSuccess)
    return Status::runtime(std::string("FusedAttention cuda.flash: ") + cudaGetErrorString(e));
  return Status::ok();
}

#if defined(OPFORGE_WITH_CUDNN_FRONTEND)
// The rows cuDNN's softmax saw only -inf or a NaN in (log-sum-exp not finite), one thread a row:
// NaN as the reference's probabilities make them, or zeros under nan_to_zero.
template <typename T>
__global__ void attnRowFixKernel(const float* __restrict__ stats, T* __restrict__ y, AttnGeom g) {
  const int64_t rows = g.B * g.H * g.sq, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    if (isfinite(stats[r])) continue;
    const int64_t s = r % g.sq, bh = r / g.sq, b = bh / g.H, h = bh - b * g.H;
    const T fill = T(g.nan_to_zero ? 0.f : __int_as_float(0x7fc00000));
    for (int64_t t = 0; t < g.dv; ++t) y[attnAt(g.y, b, h, s, t)] = fill;
  }
}

size_t statsBytes(const AttnGeom& g) {
  return (static_cast<size_t>(g.B * g.H * g.sq) * sizeof(float) + 255) / 256 * 256;
}

template <int R>
bool cudnnApplies(const AttrMap& a, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  return allLinear(in, out) && cudnnAttnApplies(geomOf(a, in), in[0].dtype, R, nullptr);
}

template <int R>
size_t cudnnWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                      std::span<const TensorDesc>) {
  const AttnGeom g = geomOf(a, in);
  size_t ws = 0;
  if (!cudnnAttnApplies(g, in[0].dtype, R, &ws)) return 0;
  return statsBytes(g) + ws;
}

template <int R>
Status cudnnCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const AttnGeom g = geomOf(k.attrs(), descsOf(in));
  if (out[0].numel() == 0) return Status::ok();
  const size_t sb = statsBytes(g);
  if (k.workspaceSize() < sb) return Status::runtime("FusedAttention cuda.cudnn: no workspace");
  auto* stats = static_cast<float*>(k.workspace());
  OPFORGE_RETURN_IF_ERROR(cudnnAttnRun(
      g, in[0].desc.dtype, R, in[0].data, in[1].data, in[2].data, biasOf(in), out[0].data, stats,
      static_cast<uint8_t*>(k.workspace()) + sb, k.workspaceSize() - sb, k.stream()));
  const unsigned blocks = blocksFor(g.B * g.H * g.sq);
  if (in[0].desc.dtype == DataType::kFloat16)
    attnRowFixKernel<<<blocks, kThreads, 0, streamOf(k)>>>(stats, static_cast<__half*>(out[0].data),
                                                           g);
  else
    attnRowFixKernel<<<blocks, kThreads, 0, streamOf(k)>>>(
        stats, static_cast<__nv_bfloat16*>(out[0].data), g);
  return launched("FusedAttention cuDNN row fix-up");
}
#endif

}  // namespace

OPFORGE_TACTICS("opforge::FusedAttention", [](OpDef& d) {
  d.tactic(1, "cuda.fused", fusedCuda, fusedApplies);
  d.tactic(2, "cuda.composite", compositeCuda, compositeApplies, compositeWorkspace);
  d.tactic(3, "cuda.flash", flashCuda, flashApplies);
#if defined(OPFORGE_WITH_CUDNN_FRONTEND)
  d.tactic(4, "cuda.cudnn", cudnnCuda<0>, cudnnApplies<0>, cudnnWorkspace<0>);
  d.tactic(5, "cuda.cudnn_1", cudnnCuda<1>, cudnnApplies<1>, cudnnWorkspace<1>);
#endif
});

}  // namespace opforge::ops
