// CUDA tactic of newop_ns::newop_name — NOT WRITTEN YET: everything below is inside `#if 0`, so
// this file compiles to nothing and the op has no CUDA tactic (the engine runs the CPU reference).
//
// TODO, in this order:
//   1. write the kernel below so that it computes what the CPU reference (newop_name.cc) computes;
//   2. change `#if 0` to `#if 1` (or delete it and its #endif);
//   3. test it against the reference on a GPU: there checkOp's engine path (newop_name_test.cc)
//      builds the op for the GPU, so the builder times this tactic and the test compares its output
//      with the reference's.
#if 0
#include <cuda_runtime.h>

#include <string>

#include "opforge/op.h"

namespace newop_ns {
namespace {
using namespace opforge;

__global__ void kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    // TODO: y[i] = the op's math on x[i], as the CPU reference computes it.
  }
}

Status cudaTactic(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kThreads, 0,
           static_cast<cudaStream_t>(ctx.stream())>>>(static_cast<const float*>(in[0].data),
                                                      static_cast<float*>(out[0].data), n);
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::ok();
  return Status::runtime(std::string("newop_ns::newop_name cuda.generic: ") +
                         cudaGetErrorString(e));
}
}  // namespace

OPFORGE_TACTICS("newop_ns::newop_name",
                [](OpDef& d) { d.tactic(1, "cuda.generic", cudaTactic); });

}  // namespace newop_ns
#endif
