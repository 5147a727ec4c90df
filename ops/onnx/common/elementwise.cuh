// elementwise.cuh — the elementwise/broadcast kernel family of the built-in ops' CUDA tactics.
//
//   map1          y[i] = f(x[i])                         (unary ops, Cast, IsNaN, ...)
//   map2          y[i] = f(a[i or 0], b[i or 0])         (same shapes, or one side a scalar)
//   broadcast2    y[i] = f(a[off_a(i)], b[off_b(i)])     (numpy broadcasting, coalesced axes)
//   nary          Max/Min/Sum/Mean of k broadcast inputs, accumulated in the compute type
//   where         cond ? x : y, broadcast
// The contiguous kernels move 16 bytes per access (Vec<T, 16 / sizeof(T)>) when every pointer is
// 16-byte aligned, with a scalar tail; otherwise one element per access. Broadcast offsets use
// 32-bit index arithmetic when every tensor has fewer than 2^31 elements.
//
// Functors compute on DNum<S>::C (float for FP16/BF16) and are adapted to storage types here, so
// an op's .cu file only says what it computes:
//   struct ReluF { template <typename C> __device__ C operator()(C x) const { ... } };
//   OPFORGE_TACTICS("ai.onnx::Relu", unaryTactics<kFloats | kSigned>("Relu", constant(ReluF{})));
#pragma once

#include "cuda_common.cuh"
#include "dmath.cuh"

namespace opforge::ops {

// make(attrs) for functors without attributes.
template <typename F>
auto constant(F f) {
  return [f](const AttrMap&) { return f; };
}

// ---------------------------------------------------------------------------------------------
// Adapters: storage -> compute -> storage
// ---------------------------------------------------------------------------------------------

template <typename SI, typename SO, typename F>
struct Adapt1 {
  F f;
  __device__ __forceinline__ SO operator()(SI x) const {
    using CO = typename DNum<SO>::C;
    return DNum<SO>::store(static_cast<CO>(f(DNum<SI>::load(x))));
  }
};

template <typename SA, typename SB, typename SO, typename F>
struct Adapt2 {
  F f;
  __device__ __forceinline__ SO operator()(SA a, SB b) const {
    using CO = typename DNum<SO>::C;
    return DNum<SO>::store(static_cast<CO>(f(DNum<SA>::load(a), DNum<SB>::load(b))));
  }
};

// ---------------------------------------------------------------------------------------------
// Contiguous kernels
// ---------------------------------------------------------------------------------------------

template <typename A, typename B>
constexpr int vecWidth() {
  constexpr size_t m = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
  return m >= 16 ? 1 : static_cast<int>(16 / m);
}

template <typename SI, typename SO, int V, typename F>
__global__ void __launch_bounds__(kThreads)
    map1Kernel(const SI* __restrict__ x, SO* __restrict__ y, int64_t n, F f) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if constexpr (V > 1) {
    const int64_t nv = n / V;
    const auto* xv = reinterpret_cast<const Vec<SI, V>*>(x);
    auto* yv = reinterpret_cast<Vec<SO, V>*>(y);
    for (int64_t i = t; i < nv; i += stride) {
      const Vec<SI, V> a = xv[i];
      Vec<SO, V> r;
#pragma unroll
      for (int k = 0; k < V; ++k) r.v[k] = f(a.v[k]);
      yv[i] = r;
    }
    done = nv * V;
  }
  for (int64_t i = done + t; i < n; i += stride) y[i] = f(x[i]);
}

// a_scalar / b_scalar: that operand has one element, broadcast to all.
template <typename SA, typename SB, typename SO, int V, typename F>
__global__ void __launch_bounds__(kThreads)
    map2Kernel(const SA* __restrict__ a, const SB* __restrict__ b, SO* __restrict__ y, int64_t n,
               bool a_scalar, bool b_scalar, F f) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if constexpr (V > 1) {
    const int64_t nv = n / V;
    auto* yv = reinterpret_cast<Vec<SO, V>*>(y);
    const SA a0 = a_scalar ? a[0] : SA{};
    const SB b0 = b_scalar ? b[0] : SB{};
    for (int64_t i = t; i < nv; i += stride) {
      Vec<SA, V> va;
      Vec<SB, V> vb;
      if (a_scalar) {
#pragma unroll
        for (int k = 0; k < V; ++k) va.v[k] = a0;
      } else {
        va = reinterpret_cast<const Vec<SA, V>*>(a)[i];
      }
      if (b_scalar) {
#pragma unroll
        for (int k = 0; k < V; ++k) vb.v[k] = b0;
      } else {
        vb = reinterpret_cast<const Vec<SB, V>*>(b)[i];
      }
      Vec<SO, V> r;
#pragma unroll
      for (int k = 0; k < V; ++k) r.v[k] = f(va.v[k], vb.v[k]);
      yv[i] = r;
    }
    done = nv * V;
  }
  for (int64_t i = done + t; i < n; i += stride) y[i] = f(a[a_scalar ? 0 : i], b[b_scalar ? 0 : i]);
}

template <typename SA, typename SB, typename SO, typename I, typename F>
__global__ void __launch_bounds__(kThreads)
    broadcast2Kernel(const SA* __restrict__ a, const SB* __restrict__ b, SO* __restrict__ y,
                     StridedShape<2> s, I n, F f) {
  const I stride = I(gridDim.x) * blockDim.x;
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[2];
    offsetsOf<2, I>(s, i, off);
    y[i] = f(a[off[0]], b[off[1]]);
  }
}

// Rows of a broadcast whose innermost axis is contiguous (stride 1) or broadcast (stride 0) for
// each input: V elements an access along the row (a squeeze-excitation scale of a channels-last
// tensor: rows are pixels, the scale a [N, C] row). `outer` holds the other axes; row_vecs is the
// row length / V.
template <typename SA, typename SB, typename SO, int V, typename I, typename F>
__global__ void __launch_bounds__(kThreads)
    broadcastRowsKernel(const SA* __restrict__ a, const SB* __restrict__ b, SO* __restrict__ y,
                        StridedShape<2> outer, I row_vecs, I n_vecs, bool a_row, bool b_row, F f) {
  const I stride = I(gridDim.x) * blockDim.x;
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n_vecs; i += stride) {
    const I r = i / row_vecs, k = (i - r * row_vecs) * V;
    I off[2];
    offsetsOf<2, I>(outer, r, off);
    Vec<SA, V> va;
    Vec<SB, V> vb;
    if (a_row) {
      va = *reinterpret_cast<const Vec<SA, V>*>(a + off[0] + k);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) va.v[e] = a[off[0]];
    }
    if (b_row) {
      vb = *reinterpret_cast<const Vec<SB, V>*>(b + off[1] + k);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) vb.v[e] = b[off[1]];
    }
    Vec<SO, V> r2;
#pragma unroll
    for (int e = 0; e < V; ++e) r2.v[e] = f(va.v[e], vb.v[e]);
    *reinterpret_cast<Vec<SO, V>*>(y + i * V) = r2;
  }
}

// ---------------------------------------------------------------------------------------------
// Host launchers
// ---------------------------------------------------------------------------------------------

// y = f(x) elementwise over x.numel() elements (f: storage -> storage).
template <typename SI, typename SO, typename F>
Status launchMap1(const void* x, void* y, int64_t n, F f, cudaStream_t st, const char* op) {
  if (n <= 0) return Status::ok();
  constexpr int V = vecWidth<SI, SO>();
  if (V > 1 && aligned16(x) && aligned16(y) && n >= V) {
    map1Kernel<SI, SO, V><<<blocksFor(n / V), kThreads, 0, st>>>(static_cast<const SI*>(x),
                                                                 static_cast<SO*>(y), n, f);
  } else {
    map1Kernel<SI, SO, 1>
        <<<blocksFor(n), kThreads, 0, st>>>(static_cast<const SI*>(x), static_cast<SO*>(y), n, f);
  }
  return launched(op);
}

inline bool fitsI32(int64_t n) {
  return n < (int64_t{1} << 31);
}

// y = f(a, b) with numpy broadcasting of a and b to y's shape (f: storage x storage -> storage).
template <typename SA, typename SB, typename SO, typename F>
Status launchBinary(const Tensor& a, const Tensor& b, const Tensor& y, F f, cudaStream_t st,
                    const char* op) {
  const int64_t n = y.numel();
  if (n <= 0) return Status::ok();
  // In y's memory order, each input's strides in its own format (LINEAR or channels-last).
  const MemoryBroadcast m = memoryBroadcast(y.desc, {&a.desc, &b.desc});
  const std::vector<int64_t> ys = stridesOf(m.dims);
  const auto inOrder = [&](const std::vector<int64_t>& st) {  // the bytes of y's order
    for (size_t j = 0; j < ys.size(); ++j)
      if (m.dims[j] != 1 && st[j] != ys[j]) return false;
    return true;
  };
  const bool a_full = inOrder(m.strides[0]), b_full = inOrder(m.strides[1]);
  const bool a_scalar = a.numel() == 1, b_scalar = b.numel() == 1;
  constexpr int V =
      vecWidth<SA, SO>() < vecWidth<SB, SO>() ? vecWidth<SA, SO>() : vecWidth<SB, SO>();
  if ((a_full || a_scalar) && (b_full || b_scalar)) {
    const bool al =
        (a_scalar || aligned16(a.data)) && (b_scalar || aligned16(b.data)) && aligned16(y.data);
    if (V > 1 && al && n >= V)
      map2Kernel<SA, SB, SO, V><<<blocksFor(n / V), kThreads, 0, st>>>(
          static_cast<const SA*>(a.data), static_cast<const SB*>(b.data), static_cast<SO*>(y.data),
          n, a_scalar && !a_full, b_scalar && !b_full, f);
    else
      map2Kernel<SA, SB, SO, 1><<<blocksFor(n), kThreads, 0, st>>>(
          static_cast<const SA*>(a.data), static_cast<const SB*>(b.data), static_cast<SO*>(y.data),
          n, a_scalar && !a_full, b_scalar && !b_full, f);
    return launched(op);
  }
  StridedShape<2> s;
  if (!coalesce<2>(m.dims, m.strides, &s))
    return Status::unsupported(std::string(op) + " (CUDA): more than " + std::to_string(kMaxDims) +
                               " broadcast axes");
  // Vector rows: the innermost axis contiguous or broadcast on each side, 16-byte aligned rows.
  if (V > 1 && s.rank >= 2 && fitsI32(n) && fitsI32(a.numel()) && fitsI32(b.numel())) {
    const int in = s.rank - 1;
    const int64_t len = s.dims[in], sa = s.strides[0][in], sb = s.strides[1][in];
    bool ok = len % V == 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1) && aligned16(y.data) &&
              (sa == 0 || aligned16(a.data)) && (sb == 0 || aligned16(b.data));
    StridedShape<2> outer;
    outer.rank = in;
    for (int d = 0; d < in && ok; ++d) {
      outer.dims[d] = s.dims[d];
      for (int j = 0; j < 2; ++j) {
        outer.strides[j][d] = s.strides[j][d];
        if (s.strides[j][in] == 1 && s.strides[j][d] % V != 0) ok = false;  // row starts aligned
      }
    }
    if (ok) {
      const uint32_t n_vecs = static_cast<uint32_t>(n / V);
      broadcastRowsKernel<SA, SB, SO, V, uint32_t><<<blocksFor(n_vecs), kThreads, 0, st>>>(
          static_cast<const SA*>(a.data), static_cast<const SB*>(b.data), static_cast<SO*>(y.data),
          outer, static_cast<uint32_t>(len / V), n_vecs, sa == 1, sb == 1, f);
      return launched(op);
    }
  }
  if (fitsI32(n) && fitsI32(a.numel()) && fitsI32(b.numel()))
    broadcast2Kernel<SA, SB, SO, uint32_t><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const SA*>(a.data), static_cast<const SB*>(b.data), static_cast<SO*>(y.data), s,
        static_cast<uint32_t>(n), f);
  else
    broadcast2Kernel<SA, SB, SO, uint64_t><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const SA*>(a.data), static_cast<const SB*>(b.data), static_cast<SO*>(y.data), s,
        static_cast<uint64_t>(n), f);
  return launched(op);
}

// ---------------------------------------------------------------------------------------------
// Tactics: unary and binary ops whose inputs share one dtype
// ---------------------------------------------------------------------------------------------

// The applies() of maps over the bytes: x and y lie alike (one format, or formats that store
// these dims alike).
inline bool sameBytesInOut(const AttrMap&, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
  return formatsShareBytes(in[0].format, out[0].format, in[0].dims);
}

// make(attrs) -> functor f(C) -> C (or bool when kBoolOut).
template <unsigned Types, bool kBoolOut = false, typename Make>
KernelFn unaryFn(const char* name, Make make) {
  return [name, make](KernelContext& k, std::span<const Tensor> in,
                      std::span<const Tensor> out) -> Status {
    auto f = make(k.attrs());
    if (out[0].numel() != in[0].numel())  // a plan's dims (edited): never read past the input
      return Status::invalid(std::string(name) + ": output " + describe(out[0].desc) +
                             " differs from input " + describe(in[0].desc));
    return visitDevice<Types>(in[0].desc.dtype, name, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      using SO = std::conditional_t<kBoolOut, Bool8, S>;
      return launchMap1<S, SO>(in[0].data, out[0].data, out[0].numel(),
                               Adapt1<S, SO, decltype(f)>{f}, streamOf(k), name);
    });
  };
}

template <unsigned Types, bool kBoolOut = false, typename Make>
auto unaryTactics(const char* name, Make make) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.map", unaryFn<Types, kBoolOut>(name, make), sameBytesInOut);
  };
}

template <unsigned Types, bool kBoolOut = false, typename Make>
KernelFn binaryFn(const char* name, Make make) {
  return [name, make](KernelContext& k, std::span<const Tensor> in,
                      std::span<const Tensor> out) -> Status {
    auto f = make(k.attrs());
    return visitDevice<Types>(in[0].desc.dtype, name, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      using SO = std::conditional_t<kBoolOut, Bool8, S>;
      return launchBinary<S, S, SO>(in[0], in[1], out[0], Adapt2<S, S, SO, decltype(f)>{f},
                                    streamOf(k), name);
    });
  };
}

template <unsigned Types, bool kBoolOut = false, typename Make>
auto binaryTactics(const char* name, Make make) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.broadcast", binaryFn<Types, kBoolOut>(name, make));  // any formats
  };
}

// ---------------------------------------------------------------------------------------------
// Integer division by zero: a check over the divisor before the op runs
// ---------------------------------------------------------------------------------------------

template <typename S>
__global__ void findZeroKernel(const S* __restrict__ b, int64_t n, DeviceErrorRecord* rec,
                               int input) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    if (b[i] == S(0)) reportDeviceError(rec, kDeviceErrorDivZero, input, 0, i, 0, 0);
}

template <typename S>
Status checkNoZero(const Tensor& b, DeviceErrorRecord* rec, int input, cudaStream_t st,
                   const char* op) {
  if (!rec || b.numel() == 0) return Status::ok();
  findZeroKernel<S><<<blocksFor(b.numel()), kThreads, 0, st>>>(static_cast<const S*>(b.data),
                                                               b.numel(), rec, input);
  return launched(op);
}

// ---------------------------------------------------------------------------------------------
// N-ary (Max, Min, Sum, Mean) and Where
// ---------------------------------------------------------------------------------------------

constexpr int kNaryMax = 8;

template <typename S>
struct NaryArgs {
  const S* x[kNaryMax];
  int count;
  StridedShape<kNaryMax> s;  // strides of each input (0 on broadcast axes)
};

// acc_in: nullptr, or a contiguous accumulator of the previous inputs (compute type C).
// out_acc: where to write the accumulator (nullptr: write y, dividing by `divisor` when > 0).
template <typename S, typename F>
__global__ void __launch_bounds__(kThreads)
    naryKernel(NaryArgs<S> args, const typename DNum<S>::C* acc_in, typename DNum<S>::C* out_acc,
               S* __restrict__ y, int64_t n, int divisor, F f) {
  using C = typename DNum<S>::C;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t rem = i;
    int64_t off[kNaryMax];
    for (int j = 0; j < args.count; ++j) off[j] = 0;
    for (int a = args.s.rank - 1; a >= 0; --a) {
      const int64_t d = args.s.dims[a];
      const int64_t q = rem / d, c = rem - q * d;
      rem = q;
      for (int j = 0; j < args.count; ++j) off[j] += c * args.s.strides[j][a];
    }
    C acc = acc_in ? acc_in[i] : DNum<S>::load(args.x[0][off[0]]);
    for (int j = acc_in ? 0 : 1; j < args.count; ++j)
      acc = static_cast<C>(f(acc, DNum<S>::load(args.x[j][off[j]])));
    if (out_acc) {
      out_acc[i] = acc;
    } else {
      if (divisor > 0) acc = static_cast<C>(acc / static_cast<C>(divisor));
      y[i] = DNum<S>::store(acc);
    }
  }
}

// The accumulator workspace an n-ary op with `inputs` inputs needs.
inline size_t naryWorkspace(size_t inputs, const TensorDesc& y, size_t compute_size) {
  return inputs > static_cast<size_t>(kNaryMax) ? static_cast<size_t>(y.numel()) * compute_size : 0;
}

template <typename S, typename F>
Status launchNary(std::span<const Tensor> in, const Tensor& y, void* ws, bool mean, F f,
                  cudaStream_t st, const char* op) {
  using C = typename DNum<S>::C;
  const int64_t n = y.numel();
  if (n <= 0) return Status::ok();
  const int total = static_cast<int>(in.size());
  C* acc = static_cast<C*>(ws);
  for (int first = 0; first < total;) {
    // The first chunk takes kNaryMax inputs; later ones kNaryMax - 0 inputs plus the accumulator.
    const int take = std::min(kNaryMax, total - first);
    NaryArgs<S> args{};
    args.count = take;
    std::vector<std::vector<int64_t>> strides;
    for (int j = 0; j < take; ++j) {
      args.x[j] = static_cast<const S*>(in[first + j].data);
      strides.push_back(broadcastStrides(in[first + j].desc.dims, y.desc.dims));
    }
    for (int j = take; j < kNaryMax; ++j)
      strides.push_back(std::vector<int64_t>(y.desc.dims.size(), 0));
    if (!coalesce<kNaryMax>(y.desc.dims, strides, &args.s))
      return Status::unsupported(std::string(op) + " (CUDA): more than " +
                                 std::to_string(kMaxDims) + " axes");
    const bool last = first + take == total;
    if (!last && !acc) return Status::internal(std::string(op) + ": no accumulator workspace");
    naryKernel<S><<<blocksFor(n), kThreads, 0, st>>>(args, first == 0 ? nullptr : acc,
                                                     last ? nullptr : acc, static_cast<S*>(y.data),
                                                     n, last && mean ? total : 0, f);
    OPFORGE_RETURN_IF_ERROR(launched(op));
    first += take;
  }
  return Status::ok();
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    whereKernel(const uint8_t* __restrict__ c, const S* __restrict__ x, const S* __restrict__ y,
                S* __restrict__ z, StridedShape<3> s, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[3];
    offsetsOf<3, int64_t>(s, i, off);
    z[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    whereFlatKernel(const uint8_t* __restrict__ c, const S* __restrict__ x, const S* __restrict__ y,
                    S* __restrict__ z, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    z[i] = c[i] ? x[i] : y[i];
}

}  // namespace opforge::ops
