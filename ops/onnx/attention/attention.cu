// CUDA tactic of ai.onnx::Attention, cuda.composite (the composite path of opforge::FusedAttention,
// with the ONNX op's cache, heads and bias):
//   1. K_all / V_all = Concat(past, new) [B, Hkv, T, size], written into present_key /
//      present_value when the node lists them, else into the workspace (3-D K / V are split into
//      heads on the way);
//   2. per query head h, batched over B: scores = s^2 Q_h K_all[h / group]^T (cuBLASLt, else the
//      tiled kernel, common/gemm_cuda.h) into the workspace, in float for FP16/BF16;
//   3. a warp per score row: softcap, the bias (mask, causal, window, padded keys; attention.h),
//      softmax in float (double for FP64), fully masked rows to 0, qk_matmul_output by its mode,
//      the probabilities rounded once to the inputs' type;
//   4. per query head, batched over B: Y_h = P V_all[h / group].
// nonpad_kv_seqlen outside [0, T] is reported through the device error record (clamped).
#include "../../common/int_fit.h"
#include "../common/cuda_common.cuh"
#include "../common/gemm_cuda.h"
#include "../common/softmax_cuda.cuh"
#include "attention.h"

namespace opforge::ops {

OnnxAttn onnxAttnGeom(const AttrMap& a, std::span<const TensorDesc> in);

namespace {

constexpr int kQ = 0, kK = 1, kV = 2, kMask = 3, kPastK = 4, kPastV = 5, kNonpad = 6;

template <typename S>
__global__ void concatKvKernel(const S* __restrict__ past, const S* __restrict__ cur,
                               S* __restrict__ all, OnnxAttn g, int64_t w) {
  const int64_t total = g.B * g.Hkv * g.T * w, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t c = e % w, t = (e / w) % g.T, h = (e / (w * g.T)) % g.Hkv,
                  b = e / (w * g.T * g.Hkv);
    all[e] = t < g.P ? past[g.pastAt(b, h, t, c, w)] : cur[g.kAt(b, h, t - g.P, c, w)];
  }
}

// scores: float for FP16/BF16 (SoftT), never rounded to S; probs: the probabilities in S (the
// same memory as scores when S is float or double).
template <typename S>
__global__ void __launch_bounds__(kThreads)
    attnSoftmaxKernel(SoftT<S>* scores, S* probs, S* __restrict__ qk, const void* __restrict__ mask,
                      DataType mask_type, const void* __restrict__ nonpad, bool nonpad64,
                      OnnxAttn g, DeviceErrorRecord* rec) {
  using T = SoftT<S>;
  using N = DNum<S>;
  const T inf = std::numeric_limits<T>::infinity();
  const int lane = threadIdx.x & 31;
  const int64_t rows = g.B * g.Hq * g.Sq, warps = int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); row < rows;
       row += warps) {
    const int64_t i = row % g.Sq, h = (row / g.Sq) % g.Hq, b = row / (g.Sq * g.Hq);
    int64_t np = 0;
    if (g.has_nonpad) {
      np = loadIndex(nonpad, nonpad64, b);
      if (np < 0 || np > g.T) {
        if (lane == 0 && i == 0 && h == 0)
          reportDeviceError(rec, np < 0 ? kDeviceErrorNegative : kDeviceErrorSize, kNonpad, np, b,
                            g.T, 2);
        np = np < 0 ? 0 : g.T;
      }
    }
    SoftT<S>* srow = scores + row * g.T;
    S* prow = probs + row * g.T;
    T m = -inf;
    bool all_masked = true;
    for (int64_t j = lane; j < g.T; j += 32) {
      T s = srow[j];
      if (g.softcap > 0) s = static_cast<T>(g.softcap) * dm::tanh(s / static_cast<T>(g.softcap));
      if (qk && g.mode <= 1) qk[g.qkAt(b, h, i, j)] = N::store(static_cast<typename N::C>(s));
      T bias = 0;
      if (g.has_mask) {
        if (j >= g.mask_len) {
          bias = -inf;
        } else {
          const int64_t at = g.maskAt(b, h, i, j);
          if (g.mask_bool) {
            bias = static_cast<const uint8_t*>(mask)[at] ? T(0) : -inf;
          } else if (mask_type == DataType::kFloat32) {
            bias = static_cast<T>(static_cast<const float*>(mask)[at]);
          } else if (mask_type == DataType::kFloat64) {
            bias = static_cast<T>(static_cast<const double*>(mask)[at]);
          } else if (mask_type == DataType::kFloat16) {
            bias = static_cast<T>(__half2float(static_cast<const __half*>(mask)[at]));
          } else {
            bias = static_cast<T>(__bfloat162float(static_cast<const __nv_bfloat16*>(mask)[at]));
          }
        }
      }
      if (!g.allowed(i, j, np)) bias += -inf;
      if (!(bias == -inf)) all_masked = false;
      s += bias;
      if (qk && g.mode == 2) qk[g.qkAt(b, h, i, j)] = N::store(static_cast<typename N::C>(s));
      srow[j] = s;
      m = softMaxOf(m, s);
    }
    m = warpMax(m);
    all_masked = __all_sync(0xffffffffu, all_masked);
    T sum = 0;
    for (int64_t j = lane; j < g.T; j += 32) sum += dm::exp(srow[j] - m);
    sum = warpSum(sum);
    for (int64_t j = lane; j < g.T; j += 32) {
      const T p = all_masked ? T(0) : dm::exp(srow[j] - m) / sum;
      prow[j] = N::store(static_cast<typename N::C>(p));
      if (qk && g.mode == 3) qk[g.qkAt(b, h, i, j)] = N::store(static_cast<typename N::C>(p));
    }
  }
}

size_t align256(size_t n) {
  return (n + 255) / 256 * 256;
}

struct Layout {
  size_t kall = 0, vall = 0, scores = 0, probs = 0, total = 0;  // byte offsets in the workspace
};

Layout layoutOf(const OnnxAttn& g, DataType t, bool own_k, bool own_v) {
  const size_t es = dtypeSize(t);
  Layout l;
  size_t at = 0;
  l.kall = at;
  if (own_k) at += align256(static_cast<size_t>(g.B * g.Hkv * g.T * g.d) * es);
  l.vall = at;
  if (own_v) at += align256(static_cast<size_t>(g.B * g.Hkv * g.T * g.dv) * es);
  l.scores = at;
  at += align256(static_cast<size_t>(g.B * g.Hq * g.Sq * g.T) * dtypeSize(gemmComputeType(t)));
  l.probs = l.scores;
  if (gemmComputeType(t) != t) {
    l.probs = at;
    at += align256(static_cast<size_t>(g.B * g.Hq * g.Sq * g.T) * es);
  }
  l.total = at;
  return l;
}

std::vector<TensorDesc> descsOf(std::span<const Tensor> ts) {
  std::vector<TensorDesc> d;
  for (const auto& t : ts) d.push_back(t.desc);
  return d;
}

Status compositeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto descs = descsOf(in);
  const OnnxAttn g = onnxAttnGeom(k.attrs(), descs);
  const DataType dt = in[kQ].desc.dtype;
  const int64_t es = static_cast<int64_t>(dtypeSize(dt));
  cudaStream_t st = streamOf(k);
  const bool own_k = out[1].numel() == 0, own_v = out[2].numel() == 0;
  const Layout l = layoutOf(g, dt, own_k, own_v);
  uint8_t* ws = static_cast<uint8_t*>(k.workspace());
  uint8_t* kall = own_k ? ws + l.kall : static_cast<uint8_t*>(out[1].data);
  uint8_t* vall = own_v ? ws + l.vall : static_cast<uint8_t*>(out[2].data);
  uint8_t* scores = ws + l.scores;
  uint8_t* probs = ws + l.probs;
  const DataType score_t = gemmComputeType(dt);
  const int64_t ss = static_cast<int64_t>(dtypeSize(score_t));
  void* lt_ws = ws + l.total;
  const size_t lt_size = k.workspaceSize() - l.total;
  void* qk = out[3].numel() > 0 ? out[3].data : nullptr;
  if (g.B == 0 || g.Hq == 0 || g.Sq == 0) return Status::ok();
  return visitDevice<kFloats>(dt, "Attention", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    for (int v = 0; v < 2; ++v) {
      const int64_t w = v ? g.dv : g.d, n = g.B * g.Hkv * g.T * w;
      if (n == 0) continue;
      concatKvKernel<S><<<blocksFor(n), kThreads, 0, st>>>(
          hasIn(in, v ? kPastV : kPastK) ? static_cast<const S*>(in[v ? kPastV : kPastK].data)
                                         : nullptr,
          static_cast<const S*>(in[v ? kV : kK].data), reinterpret_cast<S*>(v ? vall : kall), g, w);
      OPFORGE_RETURN_IF_ERROR(launched("Attention (KV concat)"));
    }
    auto gemm = [&](const GemmArgs& a) -> Status {
      if (a.k > 0 && gemmLtApplies(a, 0)) {
        Status s = gemmLt(a, 0, lt_ws, lt_size, k.stream());
        if (s.code() != StatusCode::kUnsupported) return s;  // else: the tiled kernel
      }
      return gemmTiled(a, k.stream());
    };
    const auto* q = static_cast<const uint8_t*>(in[kQ].data);
    const int64_t q_ld = g.in3d ? g.Hq * g.d : g.d, q_bs = g.Hq * g.Sq * g.d;
    const int64_t y_ld = g.in3d ? g.Hq * g.dv : g.dv, y_bs = g.Hq * g.Sq * g.dv;
    for (int64_t h = 0; h < g.Hq; ++h) {
      const int64_t kvh = h / g.group();
      GemmArgs s;
      s.dtype = dt;
      s.y_dtype = score_t;
      s.m = g.Sq, s.n = g.T, s.k = g.d;
      s.a = q + g.qAt(0, h, 0, 0) * es, s.lda = q_ld, s.a_stride = q_bs;
      s.b = kall + g.presentAt(0, kvh, 0, 0, g.d) * es, s.tb = true, s.ldb = g.d;
      s.b_stride = g.Hkv * g.T * g.d;
      s.y = scores + h * g.Sq * g.T * ss, s.ldy = g.T, s.y_stride = g.Hq * g.Sq * g.T;
      s.batch = g.B;
      s.alpha = g.scale_sqrt * g.scale_sqrt;
      if (g.T > 0) OPFORGE_RETURN_IF_ERROR(gemm(s));
    }
    const int64_t rows = g.B * g.Hq * g.Sq;
    if (g.T > 0) {
      attnSoftmaxKernel<S><<<blocksFor(rows * 32), kThreads, 0, st>>>(
          reinterpret_cast<SoftT<S>*>(scores), reinterpret_cast<S*>(probs), static_cast<S*>(qk),
          g.has_mask ? in[kMask].data : nullptr,
          g.has_mask ? in[kMask].desc.dtype : DataType::kUndefined,
          g.has_nonpad ? in[kNonpad].data : nullptr,
          g.has_nonpad && in[kNonpad].desc.dtype == DataType::kInt64, g, k.errorRecord());
      OPFORGE_RETURN_IF_ERROR(launched("Attention (softmax)"));
    }
    for (int64_t h = 0; h < g.Hq; ++h) {
      const int64_t kvh = h / g.group();
      GemmArgs o;
      o.dtype = dt;
      o.m = g.Sq, o.n = g.dv, o.k = g.T;
      o.a = probs + h * g.Sq * g.T * es, o.lda = g.T, o.a_stride = g.Hq * g.Sq * g.T;
      o.b = vall + g.presentAt(0, kvh, 0, 0, g.dv) * es, o.ldb = g.dv;
      o.b_stride = g.Hkv * g.T * g.dv;
      o.y = static_cast<uint8_t*>(out[0].data) + g.yAt(0, h, 0, 0) * es, o.ldy = y_ld;
      o.y_stride = y_bs;
      o.batch = g.B;
      OPFORGE_RETURN_IF_ERROR(gemm(o));
    }
    return Status::ok();
  });
}

size_t compositeWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                          std::span<const TensorDesc> out) {
  const OnnxAttn g = onnxAttnGeom(a, in);
  return layoutOf(g, in[kQ].dtype, out[1].numel() == 0, out[2].numel() == 0).total + kLtWorkspace;
}

bool compositeApplies(const AttrMap& a, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
  // The scores of every head are one workspace tensor: its element count must be a tensor's.
  const OnnxAttn g = onnxAttnGeom(a, in);
  return allLinear(in, out) && productBelow({g.B, g.Hq, g.Sq, g.T}, int64_t{1} << 40);
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::Attention", [](OpDef& d) {
  d.tactic(1, "cuda.composite", compositeCuda, compositeApplies, compositeWorkspace);
});

}  // namespace opforge::ops
