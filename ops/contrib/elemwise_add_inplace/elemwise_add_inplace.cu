// CUDA tactic of sample::elemwise_add_plugin_: y = x + delta, one read and one write per element
// (in place when y aliases x; a caller may also pass separate buffers, then no copy first).
//   1 cuda.vec — 16-byte loads and stores (4 fp32 or 8 fp16), four vectors in flight per thread
//                before the first store, grid-stride over one wave of resident blocks; scalar head
//                and tail when the tensor does not start or end on 16 bytes; all-scalar when x and
//                y are misaligned differently.
//   2 cuda.vec_tiles — the same kernel launched with one block per 1024 vectors (no second
//                grid-stride round).
//   3 cuda.vec1_tiles — one vector per thread, one block of 128 threads per 128 vectors: the
//                launch shape of PyTorch's vectorized elementwise kernel for 4-byte types. Small
//                blocks retire and refill the multiprocessors evenly: on the H200 this shape
//                reaches x.add_'s bandwidth where four vectors per thread in blocks of 256 stay 6 %
//                short.
#include "../../common/cuda_utils.cuh"
#include "../common/vec.cuh"

namespace opforge::contrib {

namespace {
using cu::Pack;

constexpr int kThreads = 256;

// x and y may be the same buffer: no __restrict__, and each element is read before it is written
// by the same thread.
template <typename T, int kUnroll>
__global__ void __launch_bounds__(kThreads)
    addKernel(const T* x, T* y, int64_t n, int64_t head, int64_t nvec, float delta) {
  using E = ops::DNum<T>;
  constexpr int N = Pack<T>::N;
  const auto* xv = reinterpret_cast<const uint4*>(x + head);
  auto* yv = reinterpret_cast<uint4*>(y + head);
  const int64_t nthreads = int64_t(gridDim.x) * blockDim.x;
  const int64_t step = nthreads * kUnroll;
  int64_t base = blockIdx.x * int64_t(blockDim.x) * kUnroll + threadIdx.x;
  for (; base + (kUnroll - 1) * int64_t(blockDim.x) < nvec;
       base += step) {  // full groups: no bounds tests
    Pack<T> p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) p[u].u = xv[base + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int e = 0; e < N; ++e) p[u].b[e] = E::storeBits(E::loadBits(p[u].b[e]) + delta);
      yv[base + u * blockDim.x] = p[u].u;
    }
  }
  for (int u = 0; u < kUnroll; ++u) {  // the last, partial group
    const int64_t i = base + u * int64_t(blockDim.x);
    if (i >= nvec) break;
    Pack<T> p;
    p.u = xv[i];
#pragma unroll
    for (int e = 0; e < N; ++e) p.b[e] = E::storeBits(E::loadBits(p.b[e]) + delta);
    yv[i] = p.u;
  }
  const auto* xb = reinterpret_cast<const typename E::Bits*>(x);
  auto* yb = reinterpret_cast<typename E::Bits*>(y);
  const int64_t rest = n - nvec * N;
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rest; r += nthreads) {
    const int64_t i = r < head ? r : r + nvec * N;
    yb[i] = E::storeBits(E::loadBits(xb[i]) + delta);
  }
}

template <typename T, int kUnroll, int kBlock, bool kAllTiles>
Status launch(const Tensor& x, const Tensor& y, float delta, cudaStream_t s, const char* what) {
  constexpr int N = Pack<T>::N;
  const int64_t n = y.numel();
  const auto* xp = static_cast<const T*>(x.data);
  auto* yp = static_cast<T*>(y.data);
  int64_t head = cu::headTo16(xp, sizeof(T));
  if (head < 0 || head != cu::headTo16(yp, sizeof(T)) || head > n) head = -1;
  const int64_t nvec = head < 0 ? 0 : (n - head) / N;
  if (head < 0) head = 0;
  const int64_t work = nvec > 0 ? (nvec + kUnroll - 1) / kUnroll : n;
  const unsigned grid =
      kAllTiles ? cu::gridAll(work, kBlock) : cu::gridFill(addKernel<T, kUnroll>, work, kBlock);
  addKernel<T, kUnroll><<<grid, kBlock, 0, s>>>(xp, yp, n, head, nvec, delta);
  return ops::lastLaunch(what);
}

constexpr const char* launchName(int unroll, bool all_tiles) {
  if (!all_tiles) return "elemwise_add_plugin_ cuda.vec";
  return unroll == 4 ? "elemwise_add_plugin_ cuda.vec_tiles"
                     : "elemwise_add_plugin_ cuda.vec1_tiles";
}

template <int kUnroll, int kBlock, bool kAllTiles>
Status addInplace(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& y = out[0];
  if (y.numel() == 0) return Status::ok();
  const float delta = static_cast<float>(ctx.attr<int64_t>("delta"));
  cudaStream_t s = ops::streamOf(ctx);
  return ops::visitDevice<ops::kF32 | ops::kF16>(
      y.desc.dtype, "elemwise_add_plugin_", [&](auto tag) -> Status {
        return launch<typename decltype(tag)::type, kUnroll, kBlock, kAllTiles>(
            in[0], y, delta, s, launchName(kUnroll, kAllTiles));
      });
}
}  // namespace

OPFORGE_TACTICS("sample::elemwise_add_plugin_", [](OpDef& d) {
  d.tactic(1, "cuda.vec", addInplace<4, 256, false>);
  d.tactic(2, "cuda.vec_tiles", addInplace<4, 256, true>);
  d.tactic(3, "cuda.vec1_tiles", addInplace<1, 128, true>);
});

}  // namespace opforge::contrib
