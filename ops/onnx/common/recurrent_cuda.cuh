// recurrent_cuda.cuh — the CUDA tactics of ONNX RNN, GRU and LSTM (common/recurrent.h):
//   1 cuda.recurrent  one kernel: a block per (direction, batch row) runs every time step; per step
//                     a warp per gate row takes the dot products of x_t with W's row and of h with
//                     R's row (coalesced along the row, reduced across the warp), then the block
//                     applies the gates (GRU's reset gate and R_h in a second pass when
//                     linear_before_reset = 0). Every type, any size; state in the workspace.
//   2 cuda.gemm       the input projection of all time steps first, X W^T for every (t, b) as
//                     one GEMM per direction (cuBLASLt, else the tiled kernel), into the
//                     workspace in the compute type (float for FP16/BF16); then the same per-step
//                     kernel reads the projection instead of taking x_t . W.
//   3 cuda.steps      the projection as cuda.gemm, then a kernel per time step over the whole
//                     GPU (two for GRU with linear_before_reset = 0: r * h first): a warp per
//                     (direction, hidden unit j) takes, for every batch row, the dots of its gate
//                     rows of R with h_{t-1} and applies the cell to (b, j); h is double-buffered
//                     by step parity. For few batch rows and a large hidden size, where one block
//                     per row leaves most SMs idle.
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

// ---- cuda.steps --------------------------------------------------------------------------------

// The state of the step kernels, in the workspace: h[2] (by step parity), c, rh (GRU: r * h), zp
// (GRU: z's pre-activation), each [dirs][batch][hidden] in T.
template <typename T>
struct RnnSteps {
  T *h0, *h1, *c, *rh, *zp;
};

template <typename T>
__device__ __forceinline__ int64_t rnnLenOf(const RnnArgs<T>& a, int64_t b) {
  if (!a.lens) return a.seq;
  const int64_t v = loadIndex(a.lens, a.lens64, b);
  return v < 0 ? 0 : (v > a.seq ? a.seq : v);
}

// h, c from initial_h / initial_c (or 0); Y's steps past each row's length zeroed; lengths outside
// [0, seq] reported.
template <typename S, typename T>
__global__ void rnnStepsInitKernel(RnnArgs<T> a, RnnSteps<T> st) {
  using N = DNum<S>;
  const RnnConfig& cfg = a.cfg;
  const int64_t H = a.hidden, n = cfg.dirs * a.batch * H, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t j = e % H, b = (e / H) % a.batch;
    const int d = static_cast<int>(e / (H * a.batch));
    const int64_t s = rnnStateAt(cfg.layout1, cfg.dirs, a.batch, H, d, b, j);
    st.h0[e] = a.h0 ? static_cast<T>(N::load(static_cast<const S*>(a.h0)[s])) : T(0);
    st.c[e] = a.c0 ? static_cast<T>(N::load(static_cast<const S*>(a.c0)[s])) : T(0);
    if (a.lens && d == 0 && j == 0) {
      const int64_t v = loadIndex(a.lens, a.lens64, b);
      if (v < 0) reportDeviceError(a.rec, kDeviceErrorNegative, 4, v, b, 0, 0);
      if (v > a.seq) reportDeviceError(a.rec, kDeviceErrorSize, 4, v, b, a.seq, 0);
    }
    if (a.y)
      for (int64_t t = rnnLenOf(a, b); t < a.seq; ++t)
        static_cast<S*>(a.y)[rnnYAt(cfg.layout1, a.seq, cfg.dirs, a.batch, H, t, d, b, j)] =
            N::store(0);
  }
}

// One time step. kPhase 0: every gate (GRU without linear_before_reset: z and r, then r * h into
// rh); kPhase 1: GRU's h gate from rh, and the cell.
template <typename S, typename T, int kPhase>
__global__ void __launch_bounds__(kRnnThreads)
    rnnStepKernel(RnnArgs<T> a, RnnSteps<T> st, int64_t step) {
  using N = DNum<S>;
  const RnnConfig& cfg = a.cfg;
  const int64_t H = a.hidden, G = cfg.gates, GH = G * H, rows_x = a.seq * a.batch;
  const bool gru = cfg.cell == RnnCell::kGru, lstm = cfg.cell == RnnCell::kLstm;
  const bool lbr = cfg.linear_before_reset, split = gru && !lbr;
  const T* hp = step % 2 ? st.h1 : st.h0;
  T* hn = step % 2 ? st.h0 : st.h1;
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x >> 5);
  auto ld = [](const S* q, int64_t i) -> T { return static_cast<T>(N::load(q[i])); };
  auto clip = [&](T v) -> T {
    if (!cfg.has_clip) return v;
    const T m = static_cast<T>(cfg.clip);
    return v < -m ? -m : (v > m ? m : v);
  };
  for (int64_t gw = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; gw < cfg.dirs * H;
       gw += warps) {
    const int d = static_cast<int>(gw / H);
    const int64_t j = gw % H;
    const bool rev = cfg.dirs == 2 ? d == 1 : cfg.reverse;
    const S* r = static_cast<const S*>(a.r) + d * GH * H;
    const S* wb = a.b ? static_cast<const S*>(a.b) + d * 2 * GH : nullptr;
    const S* p = a.p ? static_cast<const S*>(a.p) + d * 3 * H : nullptr;
    const RnnAct* act = cfg.act[d];
    auto bias = [&](int64_t row) { return wb ? ld(wb, row) + ld(wb, GH + row) : T(0); };
    for (int64_t b = 0; b < a.batch; ++b) {
      const int64_t len = rnnLenOf(a, b), at = (d * a.batch + b) * H;
      if (step >= len) {  // the row has ended: its state carries over
        if (kPhase == 0 && lane == 0) hn[at + j] = hp[at + j];
        continue;
      }
      const int64_t t = rev ? len - 1 - step : step;
      const T* pr = a.proj + (d * rows_x + rnnXRow(cfg.layout1, a.seq, a.batch, t, b)) * GH;
      const T* h = kPhase == 1 ? st.rh + at : hp + at;
      // The recurrent dots of this unit's gate rows: all G in phase 0 (GRU split: z and r only),
      // the h gate's in phase 1.
      T acc[4] = {0, 0, 0, 0};
      const int g0 = kPhase == 1 ? 2 : 0, g1 = kPhase == 1 ? 3 : (split ? 2 : static_cast<int>(G));
      for (int64_t k = lane; k < H; k += 32) {
        const T hk = h[k];
        for (int g = g0; g < g1; ++g) acc[g] += hk * ld(r, (g * H + j) * H + k);
      }
      for (int g = g0; g < g1; ++g) acc[g] = rnnWarpSum(acc[g]);
      if (lane != 0) continue;
      auto pre = [&](int g) { return pr[g * H + j] + bias(g * H + j) + acc[g]; };
      if (kPhase == 0 && split) {  // z kept for phase 1, r * h for the h gate's dots
        st.zp[at + j] = pre(0);
        st.rh[at + j] = rnnActivate(clip(pre(1)), act[0]) * hp[at + j];
        continue;
      }
      T hv;
      if (gru) {
        T z, hpre;
        if (kPhase == 1) {
          z = rnnActivate(clip(st.zp[at + j]), act[0]);
          hpre = pre(2);
        } else {  // linear_before_reset: h gate = x W_h + Wb_h + r * (h R_h + Rb_h)
          z = rnnActivate(clip(pre(0)), act[0]);
          const T rg = rnnActivate(clip(pre(1)), act[0]);
          const int64_t row = 2 * H + j;
          hpre =
              pr[row] + (wb ? ld(wb, row) : T(0)) + rg * (acc[2] + (wb ? ld(wb, GH + row) : T(0)));
        }
        const T hh = rnnActivate(clip(hpre), act[1]);
        hv = (T(1) - z) * hh + z * hp[at + j];
      } else if (lstm) {
        const T c = st.c[at + j];
        const T pi = p ? ld(p, j) : T(0), po = p ? ld(p, H + j) : T(0),
                pf = p ? ld(p, 2 * H + j) : T(0);
        const T f = rnnActivate(clip(pre(2) + pf * c), act[0]);
        const T i = cfg.input_forget ? T(1) - f : rnnActivate(clip(pre(0) + pi * c), act[0]);
        const T g = rnnActivate(clip(pre(3)), act[1]);
        const T cn = f * c + i * g;
        st.c[at + j] = cn;
        const T o = rnnActivate(clip(pre(1) + po * cn), act[0]);
        hv = o * rnnActivate(cn, act[2]);
      } else {
        hv = rnnActivate(clip(pre(0)), act[0]);
      }
      hn[at + j] = hv;
      if (a.y)
        static_cast<S*>(a.y)[rnnYAt(cfg.layout1, a.seq, cfg.dirs, a.batch, H, t, d, b, j)] =
            N::store(static_cast<typename N::C>(hv));
    }
  }
}

// Y_h from the buffer the last step wrote, Y_c from c.
template <typename S, typename T>
__global__ void rnnStepsFinalKernel(RnnArgs<T> a, RnnSteps<T> st) {
  using N = DNum<S>;
  const RnnConfig& cfg = a.cfg;
  const T* h = a.seq % 2 ? st.h1 : st.h0;
  const int64_t H = a.hidden, n = cfg.dirs * a.batch * H, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t j = e % H, b = (e / H) % a.batch;
    const int d = static_cast<int>(e / (H * a.batch));
    const int64_t s = rnnStateAt(cfg.layout1, cfg.dirs, a.batch, H, d, b, j);
    if (a.yh) static_cast<S*>(a.yh)[s] = N::store(static_cast<typename N::C>(h[e]));
    if (a.yc) static_cast<S*>(a.yc)[s] = N::store(static_cast<typename N::C>(st.c[e]));
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

  static size_t stepsBytes(const RnnConfig& cfg, const RnnDims& n, DataType t) {
    return align256(static_cast<size_t>(5 * cfg.dirs * n.batch * n.hidden) * computeSize(t));
  }

  // kMode 0: cuda.recurrent, 1: cuda.gemm, 2: cuda.steps (the workspace: the state, the
  // projection, cuBLASLt's workspace).
  template <int kMode>
  static Status run(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    constexpr bool kGemm = kMode != 0;
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
        const size_t state = kMode == 2 ? stepsBytes(cfg, n, dt) : stateBytes(cfg, n, dt);
        uint8_t* proj = ws + state;
        a.proj = reinterpret_cast<const T*>(proj);
        const size_t used = state + projBytes(cfg, n, dt);
        const int64_t rows = n.seq * n.batch, GH = cfg.gates * n.hidden;
        for (int d = 0; d < cfg.dirs; ++d) {
          GemmArgs g;  // proj[d] [rows x GH] = X [rows x input] W[d]^T
          g.dtype = dt;
          g.y_dtype = gemmComputeType(dt);
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
      if constexpr (kMode == 2) {
        const int64_t m = cfg.dirs * n.batch * n.hidden;
        if (m == 0) return Status::ok();  // no state: Y, Y_h and Y_c are empty
        T* base = reinterpret_cast<T*>(ws);
        const RnnSteps<T> sp{base, base + m, base + 2 * m, base + 3 * m, base + 4 * m};
        rnnStepsInitKernel<S, T><<<blocksFor(m), kThreads, 0, st>>>(a, sp);
        OPFORGE_RETURN_IF_ERROR(launched(rnnOpName(kCell)));
        const unsigned grid = static_cast<unsigned>(
            std::min<int64_t>((cfg.dirs * n.hidden + 7) / 8, int64_t{132} * 16));
        const bool split = kCell == RnnCell::kGru && !cfg.linear_before_reset;
        for (int64_t step = 0; step < n.seq; ++step) {
          rnnStepKernel<S, T, 0><<<grid, kRnnThreads, 0, st>>>(a, sp, step);
          if (split) rnnStepKernel<S, T, 1><<<grid, kRnnThreads, 0, st>>>(a, sp, step);
        }
        OPFORGE_RETURN_IF_ERROR(launched(rnnOpName(kCell)));
        rnnStepsFinalKernel<S, T><<<blocksFor(m), kThreads, 0, st>>>(a, sp);
        return launched(rnnOpName(kCell));
      }
      rnnKernel<S, T><<<static_cast<unsigned>(cfg.dirs * n.batch), kRnnThreads, 0, st>>>(a);
      return launched(rnnOpName(kCell));
    });
  }

  static size_t workspace(int mode, const AttrMap& at, std::span<const TensorDesc> in) {
    auto cfg = rnnConfig(at, kCell);
    if (!cfg) return 0;
    const RnnDims n = rnnDims(*cfg, in);
    const DataType dt = in[kRnnX].dtype;
    return (mode == 2 ? stepsBytes(*cfg, n, dt) : stateBytes(*cfg, n, dt)) +
           (mode != 0 ? projBytes(*cfg, n, dt) + kLtWorkspace : 0);
  }

  static bool appliesAll(const AttrMap& at, std::span<const TensorDesc> in,
                         std::span<const TensorDesc> out) {
    auto cfg = rnnConfig(at, kCell);
    if (!cfg || !allLinear(in, out)) return false;
    return cfg->dirs * rnnDims(*cfg, in).batch < (int64_t{1} << 31);  // one block each
  }

  static bool appliesSteps(const AttrMap& at, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
    auto cfg = rnnConfig(at, kCell);
    if (!cfg || !appliesAll(at, in, out)) return false;
    // One launch per step (two for GRU without linear_before_reset): a bound on the launches.
    return rnnDims(*cfg, in).seq <= 65536;
  }

  static void addAll(OpDef& d) {
    d.tactic(1, "cuda.recurrent", run<0>, appliesAll,
             [](const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
               return workspace(0, at, in);
             });
    d.tactic(2, "cuda.gemm", run<1>, appliesAll,
             [](const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
               return workspace(1, at, in);
             });
    d.tactic(3, "cuda.steps", run<2>, appliesSteps,
             [](const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
               return workspace(2, at, in);
             });
  }
};

}  // namespace opforge::ops
