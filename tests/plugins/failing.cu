// A test op whose CUDA tactic fails on purpose when the input's first dimension exceeds the
// attribute `limit` (so that a plan builds at small shapes and fails at run time).
#include <cuda_runtime.h>

#include <cstring>

#include "opforge/op.h"
#include "opforge/plugin_export.h"

namespace {
__global__ void copyKernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i];
}
}  // namespace

OPFORGE_OP(failing, "test::failing")
    .input("x")
    .output("y")
    .attr<int64_t>("limit", 4)
    .shape([](opforge::ShapeContext& c) -> opforge::Result<opforge::SymDesc> {
      return c.input(0).like();
    })
    .combos("FP32, FP32")
    .cpu([](opforge::KernelContext&, std::span<const opforge::Tensor> in,
            std::span<const opforge::Tensor> out) {
      std::memcpy(out[0].data, in[0].data, out[0].bytes());
      return opforge::Status::ok();
    })
    .tactic(1, "cuda.fails_above_limit",
            [](opforge::KernelContext& ctx, std::span<const opforge::Tensor> in,
               std::span<const opforge::Tensor> out) {
              if (in[0].desc.dims[0] > ctx.attr<int64_t>("limit"))
                return opforge::Status::runtime("deliberate failure: dim 0 = " +
                                                std::to_string(in[0].desc.dims[0]));
              int64_t n = in[0].numel();
              copyKernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0,
                           static_cast<cudaStream_t>(ctx.stream())>>>(
                  static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
              return cudaGetLastError() == cudaSuccess ? opforge::Status::ok()
                                                       : opforge::Status::runtime("launch");
            });
OPFORGE_PLUGIN_LIBRARY("failing", "0");
