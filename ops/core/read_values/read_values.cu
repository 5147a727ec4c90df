// CUDA tactic of opforge::ReadValues: one block copies the input and writes each element, biased,
// into its size-tensor output; the runtime reads the sizes afterwards.
#include "../../onnx/common/cuda_common.cuh"
#include "read_values.h"

namespace opforge::ops {
namespace {

struct Outs {
  int64_t* size[read_values::kMaxElements];
};

template <typename T>
__global__ void readValuesKernel(const T* __restrict__ x, T* __restrict__ y, int n, Outs o) {
  const int j = threadIdx.x;
  if (j >= n) return;
  const int64_t v = static_cast<int64_t>(x[j]);
  y[j] = x[j];
  constexpr int64_t b = read_values::kBias;
  *o.size[j] = (v < -b ? -b : v > b ? b : v) + b;
}

Status readValuesCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t n = x.numel();
  if (n < 1 || n > read_values::kMaxElements || out.size() != static_cast<size_t>(n) + 1)
    return Status::invalid("ReadValues: " + std::to_string(n) + " elements, " +
                           std::to_string(out.size()) + " outputs");
  Outs o{};
  for (int64_t j = 0; j < n; ++j) o.size[j] = static_cast<int64_t*>(out[1 + j].data);
  cudaStream_t st = streamOf(k);
  const int threads = static_cast<int>(n);
  if (x.desc.dtype == DataType::kInt64)
    readValuesKernel<<<1, threads, 0, st>>>(static_cast<const int64_t*>(x.data),
                                            static_cast<int64_t*>(out[0].data), threads, o);
  else
    readValuesKernel<<<1, threads, 0, st>>>(static_cast<const int32_t*>(x.data),
                                            static_cast<int32_t*>(out[0].data), threads, o);
  return launched("ReadValues");
}

}  // namespace

OPFORGE_TACTICS("opforge::ReadValues",
                [](OpDef& d) { d.tactic(1, "cuda.read", readValuesCuda, linearOnly); });

}  // namespace opforge::ops
