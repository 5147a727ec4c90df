// CUDA tactic of ai.onnx::NonZero: cub::DeviceSelect::Flagged picks the flat positions of the
// non-zero elements (row-major order) into the workspace and writes their count K straight into
// the size-tensor output; a second kernel turns position j into the coordinates y[d, j] of the
// INT64 [rank, K] output (rows of length K, as the reference). Nothing synchronizes: K stays on the
// device until the runtime reads the size tensor.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_select.cuh>

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

template <typename S>
struct NonZeroF {
  __host__ __device__ bool operator()(const S& v) const {
    if constexpr (std::is_same_v<S, __half>)
      return __half2float(v) != 0.f;
    else if constexpr (std::is_same_v<S, __nv_bfloat16>)
      return __bfloat162float(v) != 0.f;
    else if constexpr (std::is_same_v<S, Bool8>)
      return v.v != 0;
    else
      return v != S(0);
  }
};

template <typename S>
using FlagIt = thrust::transform_iterator<NonZeroF<S>, const S*, bool>;

template <typename S>
size_t selectBytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceSelect::Flagged(nullptr, bytes, thrust::counting_iterator<int64_t>(0),
                             FlagIt<S>(nullptr, NonZeroF<S>{}), static_cast<int64_t*>(nullptr),
                             static_cast<int64_t*>(nullptr), n);
  return bytes;
}

struct Coords {
  int rank;
  int64_t st[kMaxDims];
};

__global__ void coordsKernel(const int64_t* __restrict__ pos, const int64_t* __restrict__ count,
                             int64_t* __restrict__ y, Coords c, int64_t capacity) {
  const int64_t k = *count;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < k && j < capacity;
       j += stride) {
    int64_t rem = pos[j];
    for (int d = 0; d < c.rank; ++d) {
      y[d * k + j] = rem / c.st[d];
      rem %= c.st[d];
    }
  }
}

constexpr size_t kAlign = 256;
size_t alignUp(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

size_t nonZeroWorkspace(const AttrMap&, std::span<const TensorDesc> in,
                        std::span<const TensorDesc>) {
  const int64_t n = in[0].numel();
  size_t temp = 0;
  (void)visitDevice<kAll>(in[0].dtype, "NonZero", [&](auto tag) -> Status {
    temp = selectBytes<typename decltype(tag)::type>(n);
    return Status::ok();
  });
  return alignUp(static_cast<size_t>(n) * sizeof(int64_t)) + alignUp(temp);
}

Status nonZeroCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t n = x.numel();
  const int r = x.desc.rank();
  cudaStream_t st = streamOf(k);
  auto* count = static_cast<int64_t*>(out[1].data);
  if (n == 0) return cudaStatus(cudaMemsetAsync(count, 0, sizeof(int64_t), st), "NonZero");
  if (r > kMaxDims)
    return Status::unsupported("NonZero (CUDA): rank above " + std::to_string(kMaxDims));
  auto* pos = static_cast<int64_t*>(k.workspace());
  void* temp =
      static_cast<uint8_t*>(k.workspace()) + alignUp(static_cast<size_t>(n) * sizeof(int64_t));
  const size_t temp_bytes = k.workspaceSize() - alignUp(static_cast<size_t>(n) * sizeof(int64_t));
  OPFORGE_RETURN_IF_ERROR(visitDevice<kAll>(x.desc.dtype, "NonZero", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    size_t bytes = temp_bytes;
    return cudaStatus(
        cub::DeviceSelect::Flagged(temp, bytes, thrust::counting_iterator<int64_t>(0),
                                   FlagIt<S>(static_cast<const S*>(x.data), NonZeroF<S>{}), pos,
                                   count, n, st),
        "NonZero select");
  }));
  Coords c{};
  c.rank = r;
  const auto s = stridesOf(x.desc.dims);
  for (int d = 0; d < r; ++d) c.st[d] = s[d];
  coordsKernel<<<blocksFor(n), kThreads, 0, st>>>(pos, count, static_cast<int64_t*>(out[0].data), c,
                                                  out[0].desc.dims[1]);
  return launched("NonZero");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::NonZero", [](OpDef& d) {
  d.tactic(1, "cuda.cub_select", nonZeroCuda, linearOnly, nonZeroWorkspace);
});

}  // namespace opforge::ops
