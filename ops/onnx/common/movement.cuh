// movement.cuh — data-movement kernels of the built-in ops' CUDA tactics (only bytes move):
//
//   launchStridedCopy  y[i] = x[base + sum_a c_a(i) * stride_a] over y's dims: Transpose with an
//                      unchanged innermost axis, Expand, Slice, DepthToSpace, ... Axes are
//                      coalesced and the innermost contiguous run is copied in the widest unit
//                      (16, 8, 4, 2 or 1 bytes) that its size, the strides and the pointers allow.
//   launchPermute      any transpose: the strided copy, or a 32x32 tiled transpose through shared
//                      memory when the innermost axis moves (both sides stay coalesced).
//   launchConcat / launchSplit   rows of variable-width chunks, one launch for up to 16 tensors.
#pragma once

#include <algorithm>
#include <cstring>

#include "cuda_common.cuh"

namespace opforge::ops {

// ---------------------------------------------------------------------------------------------
// Strided copy
// ---------------------------------------------------------------------------------------------

template <typename U, typename I>
__global__ void __launch_bounds__(kThreads)
    stridedCopyKernel(const U* __restrict__ x, U* __restrict__ y, StridedShape<1> s, I n,
                      int64_t base) {
  const I stride = I(gridDim.x) * blockDim.x;
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[1];
    offsetsOf<1, I>(s, i, off);
    y[i] = x[base + static_cast<int64_t>(off[0])];
  }
}

// Signed variant: strides may be negative (Slice with negative steps).
template <typename U>
__global__ void __launch_bounds__(kThreads)
    stridedCopySignedKernel(const U* __restrict__ x, U* __restrict__ y, StridedShape<1> s,
                            int64_t n, int64_t base) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[1];
    offsetsOf<1, int64_t>(s, i, off);
    y[i] = x[base + off[0]];
  }
}

namespace detail {
template <typename U>
Status stridedCopyUnits(const void* x, void* y, const StridedShape<1>& s, int64_t n, int64_t base,
                        bool any_negative, cudaStream_t st, const char* op) {
  const U* px = static_cast<const U*>(x);
  U* py = static_cast<U*>(y);
  // The 32-bit form computes input offsets in 32 bits too: the largest must fit (a Slice of a
  // large input into a small output).
  int64_t span = 0;
  for (int a = 0; a < s.rank; ++a) span += (s.dims[a] - 1) * s.strides[0][a];
  if (any_negative)
    stridedCopySignedKernel<U><<<blocksFor(n), kThreads, 0, st>>>(px, py, s, n, base);
  else if (n < (int64_t{1} << 31) && span < (int64_t{1} << 31))
    stridedCopyKernel<U, uint32_t>
        <<<blocksFor(n), kThreads, 0, st>>>(px, py, s, static_cast<uint32_t>(n), base);
  else
    stridedCopyKernel<U, uint64_t>
        <<<blocksFor(n), kThreads, 0, st>>>(px, py, s, static_cast<uint64_t>(n), base);
  return launched(op);
}
}  // namespace detail

// y (contiguous, out_dims) [i] = x[base + sum c_a * in_strides_a], all in elements of es bytes.
inline Status launchStridedCopy(const void* x, void* y, size_t es,
                                const std::vector<int64_t>& out_dims,
                                const std::vector<int64_t>& in_strides, int64_t base,
                                cudaStream_t st, const char* op) {
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  if (n == 0) return Status::ok();
  StridedShape<1> s;
  if (!coalesce<1>(out_dims, {in_strides}, &s))
    return Status::unsupported(std::string(op) + " (CUDA): more than " + std::to_string(kMaxDims) +
                               " axes");
  bool neg = false;
  for (int a = 0; a < s.rank; ++a) neg = neg || s.strides[0][a] < 0;
  // Widen the unit over a contiguous innermost run.
  size_t unit = es;
  if (s.rank > 0 && s.strides[0][s.rank - 1] == 1 && !neg) {
    for (size_t u : {size_t{16}, size_t{8}, size_t{4}, size_t{2}}) {
      if (u <= es || u % es != 0) continue;
      const int64_t k = static_cast<int64_t>(u / es);
      bool ok = s.dims[s.rank - 1] % k == 0 && base % k == 0 &&
                (reinterpret_cast<uintptr_t>(x) % u) == 0 &&
                (reinterpret_cast<uintptr_t>(y) % u) == 0;
      for (int a = 0; a + 1 < s.rank && ok; ++a) ok = s.strides[0][a] % k == 0;
      if (ok) {
        unit = u;
        break;
      }
    }
  }
  if (unit != es) {
    const int64_t k = static_cast<int64_t>(unit / es);
    s.dims[s.rank - 1] /= k;
    for (int a = 0; a + 1 < s.rank; ++a) s.strides[0][a] /= k;
    base /= k;
    n /= k;
  }
  if (s.rank == 0) {  // one element
    s.rank = 1;
    s.dims[0] = 1;
    s.strides[0][0] = 0;
  }
  switch (unit) {
    case 1:
      return detail::stridedCopyUnits<uint8_t>(x, y, s, n, base, neg, st, op);
    case 2:
      return detail::stridedCopyUnits<uint16_t>(x, y, s, n, base, neg, st, op);
    case 4:
      return detail::stridedCopyUnits<uint32_t>(x, y, s, n, base, neg, st, op);
    case 8:
      return detail::stridedCopyUnits<uint64_t>(x, y, s, n, base, neg, st, op);
    case 16:
      return detail::stridedCopyUnits<uint4>(x, y, s, n, base, neg, st, op);
    default:
      return Status::unsupported(std::string(op) + " (CUDA): element size " + std::to_string(es));
  }
}

// ---------------------------------------------------------------------------------------------
// Tiled transpose
// ---------------------------------------------------------------------------------------------

constexpr int kTile = 32;
constexpr int kTileRows = 8;

// Input viewed as [batch..., B, ..., A] with A innermost; output has B's axis innermost. For each
// batch index: in offset = base_in + b * in_stride_b + a, out offset = base_out + a * out_stride_a
// + b.
struct TileArgs {
  int64_t A, B;
  int64_t in_stride_b, out_stride_a;
  int64_t tiles_a, tiles_b, batch;
  StridedShape<2> rest;  // the other axes: strides in the input (0) and the output (1)
};

template <typename S>
__global__ void __launch_bounds__(kTile* kTileRows)
    tiledTransposeKernel(const S* __restrict__ x, S* __restrict__ y, TileArgs t) {
  __shared__ S tile[kTile][kTile + 1];
  const int64_t tiles = t.tiles_a * t.tiles_b;
  for (int64_t job = blockIdx.x; job < tiles * t.batch; job += gridDim.x) {
    const int64_t bi = job / tiles, tj = job - bi * tiles;
    const int64_t ta = tj % t.tiles_a, tb = tj / t.tiles_a;
    int64_t off[2];
    offsetsOf<2, int64_t>(t.rest, bi, off);
    const int64_t a0 = ta * kTile, b0 = tb * kTile;
    // Read: threadIdx.x along A (contiguous in the input).
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t a = a0 + threadIdx.x, b = b0 + r;
      if (a < t.A && b < t.B) tile[r][threadIdx.x] = x[off[0] + b * t.in_stride_b + a];
    }
    __syncthreads();
    // Write: threadIdx.x along B (contiguous in the output).
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t a = a0 + r, b = b0 + threadIdx.x;
      if (a < t.A && b < t.B) y[off[1] + a * t.out_stride_a + b] = tile[threadIdx.x][r];
    }
    __syncthreads();
  }
}

// y = transpose(x, perm): output axis i is input axis perm[i] (perm normalised, a permutation).
inline Status launchPermute(const void* x, void* y, size_t es, const std::vector<int64_t>& in_dims,
                            const std::vector<int>& perm, cudaStream_t st, const char* op) {
  const int r = static_cast<int>(in_dims.size());
  int64_t n = 1;
  for (int64_t d : in_dims) n *= d;
  if (n == 0) return Status::ok();
  // Drop size-1 axes and merge input axes that stay adjacent and in order.
  std::vector<int> keep_perm;
  for (int i = 0; i < r; ++i)
    if (in_dims[perm[i]] != 1) keep_perm.push_back(perm[i]);
  std::vector<std::vector<int>> groups;  // input axes of each merged group, in output order
  for (int a : keep_perm) {
    // a continues the last group when it follows it in the input (size-1 axes in between).
    bool merge = false;
    if (!groups.empty() && a > groups.back().back()) {
      merge = true;
      for (int b = groups.back().back() + 1; b < a && merge; ++b) merge = in_dims[b] == 1;
    }
    if (merge)
      groups.back().push_back(a);
    else
      groups.push_back({a});
  }
  const int g = static_cast<int>(groups.size());
  if (g == 0) return copyDevice(y, x, es, st, op);  // one element
  // Merged input dims in input order.
  std::vector<int> order(g);
  for (int i = 0; i < g; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int p, int q) { return groups[p][0] < groups[q][0]; });
  std::vector<int64_t> gdim(g), gin_stride(g);
  for (int i = 0; i < g; ++i) {
    int64_t d = 1;
    for (int a : groups[i]) d *= in_dims[a];
    gdim[i] = d;
  }
  {
    int64_t s = 1;
    for (int k = g - 1; k >= 0; --k) {
      gin_stride[order[k]] = s;
      s *= gdim[order[k]];
    }
  }
  std::vector<int64_t> out_dims(gdim);  // groups are already in output order
  const int inner_in = order[g - 1];    // group index of the input's innermost group
  if (inner_in == g - 1 || g == 1)      // innermost axis unchanged: strided copy
    return launchStridedCopy(x, y, es, out_dims, gin_stride, 0, st, op);
  // Tiled: A = input-innermost group, B = output-innermost group.
  std::vector<int64_t> gout_stride(g);
  {
    int64_t s = 1;
    for (int k = g - 1; k >= 0; --k) {
      gout_stride[k] = s;
      s *= gdim[k];
    }
  }
  TileArgs t{};
  t.A = gdim[inner_in];
  t.B = gdim[g - 1];
  t.in_stride_b = gin_stride[g - 1];
  t.out_stride_a = gout_stride[inner_in];
  t.tiles_a = (t.A + kTile - 1) / kTile;
  t.tiles_b = (t.B + kTile - 1) / kTile;
  std::vector<int64_t> rd, rin, rout;
  for (int k = 0; k < g; ++k) {
    if (k == inner_in || k == g - 1) continue;
    rd.push_back(gdim[k]);
    rin.push_back(gin_stride[k]);
    rout.push_back(gout_stride[k]);
  }
  t.batch = 1;
  for (int64_t d : rd) t.batch *= d;
  if (!coalesce<2>(rd, {rin, rout}, &t.rest))
    return Status::unsupported(std::string(op) + " (CUDA): more than " + std::to_string(kMaxDims) +
                               " axes");
  const int64_t jobs = t.tiles_a * t.tiles_b * t.batch;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(jobs, 132 * 32));
  const dim3 block(kTile, kTileRows);
  switch (es) {
    case 1:
      tiledTransposeKernel<uint8_t>
          <<<grid, block, 0, st>>>(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), t);
      break;
    case 2:
      tiledTransposeKernel<uint16_t>
          <<<grid, block, 0, st>>>(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), t);
      break;
    case 4:
      tiledTransposeKernel<uint32_t>
          <<<grid, block, 0, st>>>(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), t);
      break;
    case 8:
      tiledTransposeKernel<uint64_t>
          <<<grid, block, 0, st>>>(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), t);
      break;
    default:
      return Status::unsupported(std::string(op) + " (CUDA): element size " + std::to_string(es));
  }
  return launched(op);
}

// ---------------------------------------------------------------------------------------------
// Concat / Split: rows of `outer` lines; line width `row` units, tensor k owns [at[k], at[k+1]).
// ---------------------------------------------------------------------------------------------

constexpr int kCatMax = 16;

struct CatArgs {
  void* p[kCatMax];
  int64_t at[kCatMax + 1];
  int count;
};

// Concat: output-driven. Split: input-driven (kSplit), every unit written once either way.
template <typename U, bool kSplit>
__global__ void __launch_bounds__(kThreads)
    catKernel(U* big, CatArgs c, int64_t outer, int64_t row) {
  const int64_t n = outer * row;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t o = i / row, j = i - o * row;
    int k = 0;
    while (k + 1 < c.count && j >= c.at[k + 1]) ++k;
    const int64_t w = c.at[k + 1] - c.at[k];
    U* part = static_cast<U*>(c.p[k]) + o * w + (j - c.at[k]);
    if constexpr (kSplit)
      *part = big[i];
    else
      big[i] = *part;
  }
}

// parts[k] (outer x widths[k] elements) joined into / cut out of big (outer x sum(widths)).
inline Status launchConcatSplit(void* big, const std::vector<void*>& parts,
                                const std::vector<int64_t>& widths, int64_t outer, size_t es,
                                bool split, cudaStream_t st, const char* op) {
  int64_t row = 0;
  for (int64_t w : widths) row += w;
  if (outer == 0 || row == 0) return Status::ok();
  if (parts.size() > static_cast<size_t>(kCatMax)) {
    // Many parts: one 2-D copy each.
    int64_t before = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const size_t w = static_cast<size_t>(widths[i]) * es, pitch = static_cast<size_t>(row) * es;
      uint8_t* b = static_cast<uint8_t*>(big) + static_cast<size_t>(before) * es;
      before += widths[i];
      if (w == 0) continue;
      cudaError_t e = split
                          ? cudaMemcpy2DAsync(parts[i], w, b, pitch, w, static_cast<size_t>(outer),
                                              cudaMemcpyDeviceToDevice, st)
                          : cudaMemcpy2DAsync(b, pitch, parts[i], w, w, static_cast<size_t>(outer),
                                              cudaMemcpyDeviceToDevice, st);
      OPFORGE_RETURN_IF_ERROR(cudaStatus(e, op));
    }
    return Status::ok();
  }
  // The widest unit every width and pointer allows.
  size_t unit = es;
  for (size_t u : {size_t{16}, size_t{8}, size_t{4}, size_t{2}}) {
    if (u <= es || u % es != 0) continue;
    const int64_t k = static_cast<int64_t>(u / es);
    bool ok = (reinterpret_cast<uintptr_t>(big) % u) == 0 && row % k == 0;
    for (size_t i = 0; i < parts.size() && ok; ++i)
      ok = widths[i] % k == 0 && (widths[i] == 0 || reinterpret_cast<uintptr_t>(parts[i]) % u == 0);
    if (ok) {
      unit = u;
      break;
    }
  }
  const int64_t k = static_cast<int64_t>(unit / es);
  CatArgs c{};
  c.count = static_cast<int>(parts.size());
  c.at[0] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    c.p[i] = parts[i];
    c.at[i + 1] = c.at[i] + widths[i] / k;
  }
  const int64_t row_u = row / k, n = outer * row_u;
  auto launch = [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    if (split)
      catKernel<U, true><<<blocksFor(n), kThreads, 0, st>>>(static_cast<U*>(big), c, outer, row_u);
    else
      catKernel<U, false><<<blocksFor(n), kThreads, 0, st>>>(static_cast<U*>(big), c, outer, row_u);
    return launched(op);
  };
  switch (unit) {
    case 1:
      return launch(TypeTag<uint8_t>{});
    case 2:
      return launch(TypeTag<uint16_t>{});
    case 4:
      return launch(TypeTag<uint32_t>{});
    case 8:
      return launch(TypeTag<uint64_t>{});
    default:
      return launch(TypeTag<uint4>{});
  }
}

// ---------------------------------------------------------------------------------------------
// Fills
// ---------------------------------------------------------------------------------------------

template <typename U>
__global__ void fillKernel(U* __restrict__ y, int64_t n, U v) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = v;
}

// Fills n elements of es bytes with the value whose bytes are `value`.
inline Status launchFill(void* y, int64_t n, size_t es, const void* value, cudaStream_t st,
                         const char* op) {
  if (n <= 0) return Status::ok();
  switch (es) {
    case 1: {
      uint8_t v;
      std::memcpy(&v, value, 1);
      return cudaStatus(cudaMemsetAsync(y, v, static_cast<size_t>(n), st), op);
    }
    case 2: {
      uint16_t v;
      std::memcpy(&v, value, 2);
      fillKernel<uint16_t><<<blocksFor(n), kThreads, 0, st>>>(static_cast<uint16_t*>(y), n, v);
      break;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, value, 4);
      fillKernel<uint32_t><<<blocksFor(n), kThreads, 0, st>>>(static_cast<uint32_t*>(y), n, v);
      break;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, value, 8);
      fillKernel<uint64_t><<<blocksFor(n), kThreads, 0, st>>>(static_cast<uint64_t*>(y), n, v);
      break;
    }
    default:
      return Status::unsupported(std::string(op) + " (CUDA): element size " + std::to_string(es));
  }
  return launched(op);
}

// Small int64 values known on the host, written by a kernel (graph-capturable, no host memory).
struct Int64Block {
  int64_t v[32];
};
static __global__ void writeInt64Kernel(int64_t* y, Int64Block b, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < n) y[i] = b.v[i];
}
inline Status writeInt64s(int64_t* y, const std::vector<int64_t>& v, cudaStream_t st,
                          const char* op) {
  for (size_t first = 0; first < v.size(); first += 32) {
    Int64Block b{};
    const int n = static_cast<int>(std::min<size_t>(32, v.size() - first));
    for (int i = 0; i < n; ++i) b.v[i] = v[first + i];
    writeInt64Kernel<<<1, 32, 0, st>>>(y + first, b, n);
    OPFORGE_RETURN_IF_ERROR(launched(op));
  }
  return Status::ok();
}

}  // namespace opforge::ops
