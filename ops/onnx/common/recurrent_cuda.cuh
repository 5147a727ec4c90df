// recurrent_cuda.cuh — the CUDA tactics of ONNX RNN, GRU and LSTM (common/recurrent.h):
//   1 cuda.recurrent  one kernel: a block per (direction, batch row) runs every time step; per step
//                     a warp per gate row takes the dot products of x_t with W's row and of h with
//                     R's row (coalesced along the row, reduced across the warp), then the block
//                     applies the gates (GRU's reset gate and R_h in a second pass when
//                     linear_before_reset = 0). Every type, any size; state in the workspace.
//   2 cuda.gemm       FP32 and FP64: the input projection of all time steps first, X W^T for
//                     every (t, b) as one GEMM per direction (cuBLASLt, else the tiled kernel),
//                     into the workspace; then the same per-step kernel reads the projection
//                     instead of taking x_t . W.
// Arithmetic in float (double for FP64); the state h, c stays in that type between steps (the
// reference: double throughout). sequence_lens outside [0, seq] is reported through the device
// error record (a negative length runs 0 steps, a longer one seq steps).
#pragma once

#include "cuda_common.cuh"
#include "gemm_cuda.h"
#include "recurrent.h"

namespace opforge::ops {

constexpr int kRnnThreads = 256;

template <typename T>
struct RnnArgs {
  RnnConfig cfg;
  int64_t seq, batch, input, hidden;
  const void *x, *w, *r, *b, *h0, *c0, *p, *lens;
  bool lens64;
  void *y, *yh, *yc;  // nullptr when the output is empty
  const T* proj;      // [dirs][seq * batch rows of X][G * hidden], or nullptr
  T* ws;              // [dirs * batch][(G + 3) * hidden]
  DeviceErrorRecord* rec;
};

template <typename T>
__device__ __forceinline__ T rnnWarpSum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename S, typename T>
__global__ void __launch_bounds__(kRnnThreads) rnnKernel(RnnArgs<T> a) {
  using N = DNum<S>;
  const RnnConfig& cfg = a.cfg;
  const int64_t H = a.hidden, G = cfg.gates, I = a.input, GH = G * H;
  const int d = static_cast<int>(blockIdx.x / a.batch);
  const int64_t b = blockIdx.x % a.batch;
  const bool rev = cfg.dirs == 2 ? d == 1 : cfg.reverse;
  const bool gru = cfg.cell == RnnCell::kGru, lstm = cfg.cell == RnnCell::kLstm;
  const bool lbr = cfg.linear_before_reset;
  T* gates = a.ws + static_cast<int64_t>(blockIdx.x) * (G + 3) * H;
  T* h = gates + GH;
  T* c = h + H;
  T* rh = c + H;
  const S* x = static_cast<const S*>(a.x);
  const S* w = static_cast<const S*>(a.w) + d * GH * I;
  const S* r = static_cast<const S*>(a.r) + d * GH * H;
  const S* wb = a.b ? static_cast<const S*>(a.b) + d * 2 * GH : nullptr;
  const S* p = a.p ? static_cast<const S*>(a.p) + d * 3 * H : nullptr;
  S* y = static_cast<S*>(a.y);
  const RnnAct* act = cfg.act[d];
  auto clip = [&](T v) -> T {
    if (!cfg.has_clip) return v;
    const T m = static_cast<T>(cfg.clip);
    return v < -m ? -m : (v > m ? m : v);
  };
  auto ld = [](const S* q, int64_t i) -> T { return static_cast<T>(N::load(q[i])); };

  int64_t len = a.seq;
  if (a.lens) {
    const int64_t v = loadIndex(a.lens, a.lens64, b);
    if (v < 0) {
      if (threadIdx.x == 0 && d == 0) reportDeviceError(a.rec, kDeviceErrorNegative, 4, v, b, 0, 0);
      len = 0;
    } else if (v > a.seq) {
      if (threadIdx.x == 0 && d == 0) reportDeviceError(a.rec, kDeviceErrorSize, 4, v, b, a.seq, 0);
      len = a.seq;
    } else {
      len = v;
    }
  }
  for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
    const int64_t s = rnnStateAt(cfg.layout1, cfg.dirs, a.batch, H, d, b, j);
    h[j] = a.h0 ? ld(static_cast<const S*>(a.h0), s) : T(0);
    c[j] = a.c0 ? ld(static_cast<const S*>(a.c0), s) : T(0);
  }
  if (y)
    for (int64_t t = len; t < a.seq; ++t)
      for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
        y[rnnYAt(cfg.layout1, a.seq, cfg.dirs, a.batch, H, t, d, b, j)] = N::store(0);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int64_t rows_x = a.seq * a.batch;
  for (int64_t step = 0; step < len; ++step) {
    const int64_t t = rev ? len - 1 - step : step;
    const int64_t xrow = rnnXRow(cfg.layout1, a.seq, a.batch, t, b);
    // Pass 1: the pre-activations of every gate row (GRU's h gate: X's part only; with
    // linear_before_reset its recurrent part H R_h + Rb_h goes to rh).
    for (int64_t row = warp; row < GH; row += warps) {
      const bool gru_h = gru && row >= 2 * H;
      T sx = 0, sr = 0;
      if (a.proj) {
        if (lane == 0) sx = a.proj[(d * rows_x + xrow) * GH + row];
      } else {
        for (int64_t k = lane; k < I; k += 32) sx += ld(x, xrow * I + k) * ld(w, row * I + k);
      }
      if (!gru_h || lbr)
        for (int64_t k = lane; k < H; k += 32) sr += h[k] * ld(r, row * H + k);
      sx = rnnWarpSum(sx);
      sr = rnnWarpSum(sr);
      if (lane == 0) {
        const T bw = wb ? ld(wb, row) : T(0), br = wb ? ld(wb, GH + row) : T(0);
        if (!gru_h)
          gates[row] = sx + bw + sr + br;
        else {
          gates[row] = sx + bw;
          if (lbr) rh[row - 2 * H] = sr + br;
        }
      }
    }
    __syncthreads();
    if (gru && !lbr) {  // r * h, then (r * h) R_h + Rb_h into the h gate
      for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
        rh[j] = rnnActivate(clip(gates[H + j]), act[0]) * h[j];
      __syncthreads();
      for (int64_t row = warp; row < H; row += warps) {
        T s = 0;
        for (int64_t k = lane; k < H; k += 32) s += rh[k] * ld(r, (2 * H + row) * H + k);
        s = rnnWarpSum(s);
        if (lane == 0) gates[2 * H + row] += s + (wb ? ld(wb, GH + 2 * H + row) : T(0));
      }
      __syncthreads();
    }
    // Pass 2: the cell, element j of the state per thread.
    for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
      T hn;
      if (gru) {
        const T z = rnnActivate(clip(gates[j]), act[0]);
        T pre = gates[2 * H + j];
        if (lbr) pre += rnnActivate(clip(gates[H + j]), act[0]) * rh[j];
        const T hh = rnnActivate(clip(pre), act[1]);
        hn = (T(1) - z) * hh + z * h[j];
      } else if (lstm) {
        const T pi = p ? ld(p, j) : T(0), po = p ? ld(p, H + j) : T(0),
                pf = p ? ld(p, 2 * H + j) : T(0);
        const T f = rnnActivate(clip(gates[2 * H + j] + pf * c[j]), act[0]);
        const T i = cfg.input_forget ? T(1) - f : rnnActivate(clip(gates[j] + pi * c[j]), act[0]);
        const T g = rnnActivate(clip(gates[3 * H + j]), act[1]);
        const T cn = f * c[j] + i * g;
        c[j] = cn;
        const T o = rnnActivate(clip(gates[H + j] + po * cn), act[0]);
        hn = o * rnnActivate(cn, act[2]);
      } else {
        hn = rnnActivate(clip(gates[j]), act[0]);
      }
      h[j] = hn;
      if (y)
        y[rnnYAt(cfg.layout1, a.seq, cfg.dirs, a.batch, H, t, d, b, j)] =
            N::store(static_cast<typename N::C>(hn));
    }
    __syncthreads();
  }
  for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
    const int64_t s = rnnStateAt(cfg.layout1, cfg.dirs, a.batch, H, d, b, j);
    if (a.yh) static_cast<S*>(a.yh)[s] = N::store(static_cast<typename N::C>(h[j]));
    if (a.yc) static_cast<S*>(a.yc)[s] = N::store(static_cast<typename N::C>(c[j]));
  }
}

template <RnnCell kCell>
struct RnnTactics {
  static size_t align256(size_t n) { return (n + 255) / 256 * 256; }
  static size_t computeSize(DataType t) { return t == DataType::kFloat64 ? 8 : 4; }
  static size_t stateBytes(const RnnConfig& cfg, const RnnDims& n, DataType t) {
    return align256(static_cast<size_t>(cfg.dirs * n.batch * (cfg.gates + 3) * n.hidden) *
                    computeSize(t));
  }
  static size_t projBytes(const RnnConfig& cfg, const RnnDims& n, DataType t) {
    return align256(static_cast<size_t>(cfg.dirs * n.seq * n.batch * cfg.gates * n.hidden) *
                    computeSize(t));
  }

  template <bool kGemm>
  static Status run(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(RnnConfig cfg, rnnConfig(k.attrs(), kCell));
    std::vector<TensorDesc> descs;
    for (const auto& t : in) descs.push_back(t.desc);
    const RnnDims n = rnnDims(cfg, descs);
    const DataType dt = in[kRnnX].desc.dtype;
    cudaStream_t st = streamOf(k);
    auto ptr = [&](int i) -> const void* {
      return hasIn(in, static_cast<size_t>(i)) ? in[static_cast<size_t>(i)].data : nullptr;
    };
    auto optOut = [&](size_t i) -> void* {
      return i < out.size() && out[i].numel() > 0 ? out[i].data : nullptr;
    };
    const bool lstm = kCell == RnnCell::kLstm;
    if (n.batch == 0) return Status::ok();
    uint8_t* ws = static_cast<uint8_t*>(k.workspace());
    return visitDevice<kFloats>(dt, rnnOpName(kCell), [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      using T = std::conditional_t<std::is_same_v<S, double>, double, float>;
      RnnArgs<T> a{};
      a.cfg = cfg;
      a.seq = n.seq, a.batch = n.batch, a.input = n.input, a.hidden = n.hidden;
      a.x = ptr(kRnnX), a.w = ptr(kRnnW), a.r = ptr(kRnnR), a.b = ptr(kRnnB);
      a.lens = ptr(kRnnLens);
      a.lens64 = a.lens && in[kRnnLens].desc.dtype == DataType::kInt64;
      a.h0 = ptr(kRnnH0);
      a.c0 = lstm ? ptr(kRnnC0) : nullptr;
      a.p = lstm ? ptr(kRnnP) : nullptr;
      a.y = optOut(0), a.yh = optOut(1), a.yc = lstm ? optOut(2) : nullptr;
      a.ws = reinterpret_cast<T*>(ws);
      a.rec = k.errorRecord();
      a.proj = nullptr;
      if constexpr (kGemm) {
        uint8_t* proj = ws + stateBytes(cfg, n, dt);
        a.proj = reinterpret_cast<const T*>(proj);
        const size_t used = stateBytes(cfg, n, dt) + projBytes(cfg, n, dt);
        const int64_t rows = n.seq * n.batch, GH = cfg.gates * n.hidden;
        for (int d = 0; d < cfg.dirs; ++d) {
          GemmArgs g;  // proj[d] [rows x GH] = X [rows x input] W[d]^T
          g.dtype = dt;
          g.m = rows, g.n = GH, g.k = n.input;
          g.a = a.x, g.lda = n.input;
          g.b = static_cast<const S*>(a.w) + d * GH * n.input, g.tb = true, g.ldb = n.input;
          g.y = proj + static_cast<size_t>(d * rows * GH) * sizeof(T), g.ldy = GH;
          if (g.m == 0 || g.n == 0) continue;
          auto project = [&]() -> Status {
            if (g.k > 0 && gemmLtApplies(g, 0)) {
              Status s = gemmLt(g, 0, ws + used, k.workspaceSize() - used, k.stream());
              if (s.code() != StatusCode::kUnsupported) return s;
            }
            return gemmTiled(g, k.stream());  // also k == 0: zeros
          };
          OPFORGE_RETURN_IF_ERROR(project());
        }
      }
      rnnKernel<S, T><<<static_cast<unsigned>(cfg.dirs * n.batch), kRnnThreads, 0, st>>>(a);
      return launched(rnnOpName(kCell));
    });
  }

  static size_t workspace(bool gemm, const AttrMap& at, std::span<const TensorDesc> in) {
    auto cfg = rnnConfig(at, kCell);
    if (!cfg) return 0;
    const RnnDims n = rnnDims(*cfg, in);
    const DataType dt = in[kRnnX].dtype;
    return stateBytes(*cfg, n, dt) + (gemm ? projBytes(*cfg, n, dt) + kLtWorkspace : 0);
  }

  static bool appliesAll(const AttrMap& at, std::span<const TensorDesc> in,
                         std::span<const TensorDesc> out) {
    auto cfg = rnnConfig(at, kCell);
    if (!cfg || !allLinear(in, out)) return false;
    return cfg->dirs * rnnDims(*cfg, in).batch < (int64_t{1} << 31);  // one block each
  }
  static bool appliesGemm(const AttrMap& at, std::span<const TensorDesc> in,
                          std::span<const TensorDesc> out) {
    const DataType t = in[kRnnX].dtype;
    return (t == DataType::kFloat32 || t == DataType::kFloat64) && appliesAll(at, in, out);
  }

  static void addAll(OpDef& d) {
    d.tactic(1, "cuda.recurrent", run<false>, appliesAll,
             [](const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
               return workspace(false, at, in);
             });
    d.tactic(2, "cuda.gemm", run<true>, appliesGemm,
             [](const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
               return workspace(true, at, in);
             });
  }
};

}  // namespace opforge::ops
