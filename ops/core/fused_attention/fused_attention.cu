// CUDA tactics of opforge::FusedAttention:
//   1 cuda.fused      one kernel: a block loads one (batch, head)'s K and V into shared memory (as
//                     float) and each warp takes query rows: scores, softmax and the weighted sum of
//                     V without leaving the SM (when K and V fit in 48 KiB);
//   2 cuda.composite  scores by a batched GEMM (cuBLASLt, else the tiled kernel) into the workspace,
//                     the row softmax, then the product with V (any size).
// Arithmetic in float (double for FP64).
#include "../../onnx/common/gemm_cuda.h"
#include "../../onnx/common/softmax_cuda.cuh"

namespace opforge::ops {
namespace {

struct AttnGeom {
  int64_t batch, sq, sk, d, dv;
  bool kt;
  double scale;
};

AttnGeom geomOf(const AttrMap& a, const TensorDesc& q, const TensorDesc& v) {
  const int r = q.rank();
  return AttnGeom{prodOf(q.dims, 0, r - 2), q.dims[r - 2], v.dims[r - 2], q.dims[r - 1], v.dims[r - 1],
                  a.get<int64_t>("k_transposed") != 0, a.get<double>("scale")};
}

constexpr int kWarps = 4, kRowsPerBlock = 16;

template <typename S>
size_t fusedSmem(const AttnGeom& g) {
  const size_t es = std::is_same_v<S, double> ? 8 : 4;
  return es * static_cast<size_t>(g.sk * (g.d + 1) + g.sk * g.dv + kWarps * g.d + kWarps * g.sk);
}

template <typename S>
__global__ void __launch_bounds__(kWarps * 32) attentionKernel(const S* __restrict__ q, const S* __restrict__ k,
                                                              const S* __restrict__ v, S* __restrict__ y, AttnGeom g) {
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
  for (int64_t job = blockIdx.x; job < g.batch * chunks; job += gridDim.x) {
    const int64_t b = job / chunks, r0 = (job % chunks) * kRowsPerBlock;
    __syncthreads();  // the previous job's K and V are no longer read
    for (int64_t e = threadIdx.x; e < g.sk * g.d; e += blockDim.x) {
      const int64_t j = e / g.d, t = e - j * g.d;
      K[j * (g.d + 1) + t] =
          static_cast<T>(DNum<S>::load(g.kt ? k[(b * g.d + t) * g.sk + j] : k[(b * g.sk + j) * g.d + t]));
    }
    for (int64_t e = threadIdx.x; e < g.sk * g.dv; e += blockDim.x)
      V[e] = static_cast<T>(DNum<S>::load(v[b * g.sk * g.dv + e]));
    __syncthreads();
    for (int64_t i = r0 + warp; i < r0 + kRowsPerBlock && i < g.sq; i += kWarps) {
      const S* qr = q + (b * g.sq + i) * g.d;
      for (int64_t t = lane; t < g.d; t += 32) qw[t] = static_cast<T>(DNum<S>::load(qr[t]));
      __syncwarp();
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = lane; j < g.sk; j += 32) {
        T dot = 0;
        const T* kr = K + j * (g.d + 1);
        for (int64_t t = 0; t < g.d; ++t) dot += qw[t] * kr[t];
        const T s = static_cast<T>(g.scale) * dot;
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
      S* yr = y + (b * g.sq + i) * g.dv;
      for (int64_t c = lane; c < g.dv; c += 32) {
        T acc = 0;
        for (int64_t j = 0; j < g.sk; ++j) acc += pw[j] * V[j * g.dv + c];
        yr[c] = DNum<S>::store(static_cast<typename DNum<S>::C>(acc / sum));
      }
      __syncwarp();
    }
  }
}

Status fusedCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const AttnGeom g = geomOf(k.attrs(), in[0].desc, in[2].desc);
  if (out[0].numel() == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "FusedAttention", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    const int64_t jobs = g.batch * ((g.sq + kRowsPerBlock - 1) / kRowsPerBlock);
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(jobs, 132 * 16));
    attentionKernel<S><<<grid, kWarps * 32, fusedSmem<S>(g), streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data), static_cast<const S*>(in[2].data),
        static_cast<S*>(out[0].data), g);
    return launched("FusedAttention");
  });
}

bool fusedApplies(const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  const AttnGeom g = geomOf(a, in[0], in[2]);
  const size_t bytes = in[0].dtype == DataType::kFloat64 ? fusedSmem<double>(g) : fusedSmem<float>(g);
  return bytes <= 48 * 1024 && g.sk >= 1;
}

// Composite: scores (workspace) = scale * Q K^T, softmax in place, Y = P V.
size_t scoresBytes(const AttnGeom& g, DataType t) {
  return (static_cast<size_t>(g.batch * g.sq * g.sk) * dtypeSize(t) + 255) / 256 * 256;
}

Status compositeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const AttnGeom g = geomOf(k.attrs(), in[0].desc, in[2].desc);
  if (out[0].numel() == 0) return Status::ok();
  const DataType t = in[0].desc.dtype;
  void* scores = k.workspace();
  void* lt_ws = static_cast<uint8_t*>(k.workspace()) + scoresBytes(g, t);
  const size_t lt_size = k.workspaceSize() - scoresBytes(g, t);
  auto gemm = [&](GemmArgs a) -> Status {
    if (a.k > 0 && gemmLtApplies(a, 0)) return gemmLt(a, 0, lt_ws, lt_size, k.stream());
    return gemmTiled(a, k.stream());
  };
  GemmArgs s;
  s.dtype = t;
  s.m = g.sq, s.n = g.sk, s.k = g.d;
  s.a = in[0].data, s.lda = g.d, s.a_stride = g.sq * g.d;
  s.b = in[1].data, s.tb = !g.kt, s.ldb = g.kt ? g.sk : g.d, s.b_stride = g.sk * g.d;
  s.y = scores, s.ldy = g.sk, s.y_stride = g.sq * g.sk;
  s.batch = g.batch;
  s.alpha = g.scale;
  OPFORGE_RETURN_IF_ERROR(gemm(s));
  OPFORGE_RETURN_IF_ERROR(visitDevice<kFloats>(t, "FusedAttention", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    softmaxKernel<SoftmaxKind::kSoftmax, S, SoftMode::kWarp><<<blocksFor(g.batch * g.sq * 32), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(scores), static_cast<S*>(scores), g.batch * g.sq, g.sk, 1);
    return launched("FusedAttention softmax");
  }));
  GemmArgs o;
  o.dtype = t;
  o.m = g.sq, o.n = g.dv, o.k = g.sk;
  o.a = scores, o.lda = g.sk, o.a_stride = g.sq * g.sk;
  o.b = in[2].data, o.ldb = g.dv, o.b_stride = g.sk * g.dv;
  o.y = out[0].data, o.ldy = g.dv, o.y_stride = g.sq * g.dv;
  o.batch = g.batch;
  return gemm(o);
}

size_t compositeWorkspace(const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return scoresBytes(geomOf(a, in[0], in[2]), in[0].dtype) + kLtWorkspace;
}

}  // namespace

OPFORGE_TACTICS("opforge::FusedAttention", [](OpDef& d) {
  d.tactic(1, "cuda.fused", fusedCuda, fusedApplies);
  d.tactic(2, "cuda.composite", compositeCuda, linearOnly, compositeWorkspace);
});

}  // namespace opforge::ops
