// CUDA tactic of example::non_zero_plugin: CUB's DeviceSelect picks the flat indices of the
// non-zero elements in order (stable), writing the count straight into the size-tensor output;
// a second kernel turns flat indices into (row, column) pairs.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "../../common/cuda_utils.cuh"

namespace opforge::contrib {

namespace {
template <typename T>
struct IsNonZero {
  const T* x;
  __device__ bool operator()(int i) const { return x[i] != T(0); }
};
template <>
struct IsNonZero<__half> {
  const __half* x;
  __device__ bool operator()(int i) const { return __half2float(x[i]) != 0.f; }
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
  cub::DeviceSelect::If(nullptr, bytes, thrust::counting_iterator<int>(0), static_cast<int*>(nullptr),
                        static_cast<int*>(nullptr), n, IsNonZero<T>{nullptr});
  return bytes;
}

template <typename F>
auto byType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32: return f(float{});
    case DataType::kFloat16: return f(__half{});
    case DataType::kInt32: return f(int32_t{});
    default: return f(uint8_t{});  // BOOL
  }
}

size_t alignUp(size_t v) { return (v + 255) / 256 * 256; }

size_t workspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  const int n = static_cast<int>(in[0].numel());
  return byType(in[0].dtype, [&](auto t) { return alignUp(cubBytes<decltype(t)>(n)) + alignUp(size_t(n) * 4); });
}

bool applies(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return in[0].numel() < (int64_t{1} << 31);
}

Status nonZeroCub(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int n = static_cast<int>(x.numel());
  const int cols = static_cast<int>(x.desc.dims[1]);
  auto* count = static_cast<int*>(out[1].data);
  cudaStream_t s = ops::streamOf(ctx);
  if (n == 0) return ops::cudaStatus(cudaMemsetAsync(count, 0, sizeof(int), s), "non_zero");
  return byType(x.desc.dtype, [&](auto t) -> Status {
    using T = decltype(t);
    size_t bytes = cubBytes<T>(n);
    auto* base = static_cast<uint8_t*>(ctx.workspace());
    if (ctx.workspaceSize() < alignUp(bytes) + alignUp(size_t(n) * 4)) return Status::internal("non_zero: workspace too small");
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

OPFORGE_TACTICS("example::non_zero_plugin", [](OpDef& d) { d.tactic(1, "cuda.cub_select", nonZeroCub, applies, workspace); });

}  // namespace opforge::contrib
