// CUDA tactics of example::non_zero_plugin. Both write the count straight into the size-tensor
// output (the engine reads it back).
//   1 cuda.cub_select — CUB's DeviceSelect picks the flat indices of the non-zero elements in order
//                       (stable) into the workspace; a second kernel turns them into pairs.
//   2 cuda.cub_pairs  — one pass: DeviceSelect over the (row, column) pairs of the flat indices
//                       (computed on the fly) written straight to the int2 output (decoupled
//                       look-back: the input is read once, the pairs written once, no workspace
//                       beyond CUB's scratch); an output iterator that splits each flat index into
//                       two int32 stores when the output is not 8-byte aligned.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_select.cuh>

#include <cstddef>
#include <iterator>

#include "../../common/cuda_utils.cuh"
#include "../../common/device_types.cuh"
#include "../common/fast_divmod.h"

namespace opforge::contrib {

namespace {
// FP16 compares in float, BOOL as 0 or not.
template <typename T>
struct IsNonZero {
  const T* x;
  __device__ bool operator()(int i) const {
    return ops::DNum<T>::load(x[i]) != typename ops::DNum<T>::C(0);
  }
};

__global__ void toPairs(const int* __restrict__ flat, const int* __restrict__ count, int cols,
                        int* __restrict__ out) {
  const int k = *count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x) {
    const int f = flat[i];
    out[2 * i] = f / cols;
    out[2 * i + 1] = f % cols;
  }
}

template <typename T>
size_t cubBytes(int n) {
  size_t bytes = 0;
  cub::DeviceSelect::If(nullptr, bytes, thrust::counting_iterator<int>(0),
                        static_cast<int*>(nullptr), static_cast<int*>(nullptr), n,
                        IsNonZero<T>{nullptr});
  return bytes;
}

constexpr unsigned kTypes = ops::kF32 | ops::kF16 | ops::kI32 | ops::kBools;  // the combos'

size_t alignUp(size_t v) {
  return (v + 255) / 256 * 256;
}

size_t workspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  const int n = static_cast<int>(in[0].numel());
  size_t bytes = 0;
  (void)ops::visitDevice<kTypes>(in[0].dtype, "non_zero", [&](auto t) {
    bytes = alignUp(cubBytes<typename decltype(t)::type>(n)) + alignUp(size_t(n) * 4);
    return Status::ok();
  });
  return bytes;
}

bool applies(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return in[0].numel() < (int64_t{1} << 30);  // out[2 * i] and the int grid-stride step fit
}

// Output iterator for tactic 2: position k receives flat index f and stores (f / cols, f % cols)
// at out[2k], out[2k + 1].
struct PairRef {
  int* p;
  FastDivmod cols;
  __device__ PairRef& operator=(int flat) {
    uint32_t q, r;
    cols.divmod(static_cast<uint32_t>(flat), q, r);
    p[0] = static_cast<int>(q);
    p[1] = static_cast<int>(r);
    return *this;
  }
};
struct PairWriter {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = int;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = PairRef;
  int* out;
  FastDivmod cols;
  __host__ __device__ PairWriter operator+(difference_type n) const {
    return PairWriter{out + 2 * n, cols};
  }
  __device__ PairRef operator*() const {
    return PairRef{out, cols};
  }  // CUB writes *(it + k) = flat
};

// The aligned path of tactic 2: the items are the pairs themselves (a transform of the flat index),
// written through a plain int2 pointer.
struct ToPair {
  FastDivmod cols;
  __device__ int2 operator()(int flat) const {
    uint32_t q, r;
    cols.divmod(static_cast<uint32_t>(flat), q, r);
    return make_int2(static_cast<int>(q), static_cast<int>(r));
  }
};
using PairIt = thrust::transform_iterator<ToPair, thrust::counting_iterator<int>>;
template <typename T>
struct PairIsNonZero {
  const T* x;
  int cols;
  __device__ bool operator()(const int2& p) const { return IsNonZero<T>{x}(p.x * cols + p.y); }
};

template <typename T>
size_t cubPairsBytes(int n) {
  size_t a = 0, b = 0;
  cub::DeviceSelect::If(
      nullptr, a, PairIt(thrust::counting_iterator<int>(0), ToPair{FastDivmod(1)}),
      static_cast<int2*>(nullptr), static_cast<int*>(nullptr), n, PairIsNonZero<T>{nullptr, 1});
  cub::DeviceSelect::If(nullptr, b, thrust::counting_iterator<int>(0),
                        PairWriter{nullptr, FastDivmod(1)}, static_cast<int*>(nullptr), n,
                        IsNonZero<T>{nullptr});
  return a > b ? a : b;
}

size_t pairsWorkspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  const int n = static_cast<int>(in[0].numel());
  size_t bytes = 0;
  (void)ops::visitDevice<kTypes>(in[0].dtype, "non_zero", [&](auto t) {
    bytes = cubPairsBytes<typename decltype(t)::type>(n);
    return Status::ok();
  });
  return bytes;
}

Status nonZeroPairs(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int n = static_cast<int>(x.numel());
  auto* count = static_cast<int*>(out[1].data);
  cudaStream_t s = ops::streamOf(ctx);
  if (n == 0) return ops::cudaStatus(cudaMemsetAsync(count, 0, sizeof(int), s), "non_zero");
  const FastDivmod cols(static_cast<uint32_t>(x.desc.dims[1]));
  return ops::visitDevice<kTypes>(x.desc.dtype, "non_zero", [&](auto t) -> Status {
    using T = typename decltype(t)::type;
    size_t bytes = cubPairsBytes<T>(n);
    if (ctx.workspaceSize() < bytes) return Status::internal("non_zero: workspace too small");
    if (reinterpret_cast<uintptr_t>(out[0].data) % alignof(int2) == 0)
      return ops::cudaStatus(
          cub::DeviceSelect::If(
              ctx.workspace(), bytes, PairIt(thrust::counting_iterator<int>(0), ToPair{cols}),
              static_cast<int2*>(out[0].data), count, n,
              PairIsNonZero<T>{static_cast<const T*>(x.data), static_cast<int>(x.desc.dims[1])}, s),
          "non_zero DeviceSelect::If (pairs)");
    return ops::cudaStatus(
        cub::DeviceSelect::If(ctx.workspace(), bytes, thrust::counting_iterator<int>(0),
                              PairWriter{static_cast<int*>(out[0].data), cols}, count, n,
                              IsNonZero<T>{static_cast<const T*>(x.data)}, s),
        "non_zero DeviceSelect::If (pairs, unaligned output)");
  });
}

Status nonZeroCub(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int n = static_cast<int>(x.numel());
  const int cols = static_cast<int>(x.desc.dims[1]);
  auto* count = static_cast<int*>(out[1].data);
  cudaStream_t s = ops::streamOf(ctx);
  if (n == 0) return ops::cudaStatus(cudaMemsetAsync(count, 0, sizeof(int), s), "non_zero");
  return ops::visitDevice<kTypes>(x.desc.dtype, "non_zero", [&](auto t) -> Status {
    using T = typename decltype(t)::type;
    size_t bytes = cubBytes<T>(n);
    auto* base = static_cast<uint8_t*>(ctx.workspace());
    if (ctx.workspaceSize() < alignUp(bytes) + alignUp(size_t(n) * 4))
      return Status::internal("non_zero: workspace too small");
    int* flat = reinterpret_cast<int*>(base + alignUp(bytes));
    OPFORGE_RETURN_IF_ERROR(ops::cudaStatus(
        cub::DeviceSelect::If(base, bytes, thrust::counting_iterator<int>(0), flat, count, n,
                              IsNonZero<T>{static_cast<const T*>(x.data)}, s),
        "non_zero DeviceSelect::If"));
    toPairs<<<ops::gridFor(n, 256), 256, 0, s>>>(flat, count, cols, static_cast<int*>(out[0].data));
    return ops::lastLaunch("non_zero toPairs");
  });
}
}  // namespace

OPFORGE_TACTICS("example::non_zero_plugin", [](OpDef& d) {
  d.tactic(1, "cuda.cub_select", nonZeroCub, applies, workspace);
  d.tactic(2, "cuda.cub_pairs", nonZeroPairs, applies, pairsWorkspace);
});

}  // namespace opforge::contrib
