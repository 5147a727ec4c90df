// CUDA tactic of ai.onnx::OneHot: y[o, d, i] = values[d == hot(o, i) ? 1 : 0] with hot the index
// truncated toward zero (negative: + depth); an index outside [-depth, depth) gives a row of
// values[0], as the reference. Indices (any numeric type) and values are read on the device.
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {
template <typename SI, typename U>
__global__ void oneHotKernel(const SI* __restrict__ idx, const U* __restrict__ values,
                             U* __restrict__ y, int64_t outer, int64_t depth, int64_t inner) {
  const U off = values[0], on = values[1];
  const int64_t n = outer * depth * inner, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t in = i % inner, t = i / inner, d = t % depth, o = t / depth;
    const double v = static_cast<double>(DNum<SI>::load(idx[o * inner + in]));
    int64_t hot = -1;
    if (v == v && v > -9.0e18 && v < 9.0e18) {
      hot = static_cast<int64_t>(trunc(v));
      if (hot < 0) hot += depth;
    }
    y[i] = d == hot ? on : off;
  }
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::OneHot", [](OpDef& d) {
  d.tactic(
      1, "cuda.fill",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor &idx = in[0], &v = in[2], &y = out[0];
        const int r = y.desc.rank();
        const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
        const int64_t depth = y.desc.dims[axis], outer = prodOf(y.desc.dims, 0, axis),
                      inner = prodOf(y.desc.dims, axis + 1, r);
        if (y.numel() == 0) return Status::ok();
        return visitDevice<kNumeric>(idx.desc.dtype, "OneHot", [&](auto ti) -> Status {
          using SI = typename decltype(ti)::type;
          return visitDeviceBySize(v.desc.dtype, "OneHot", [&](auto tv) -> Status {
            using U = typename decltype(tv)::type;
            oneHotKernel<SI, U><<<blocksFor(y.numel()), kThreads, 0, streamOf(k)>>>(
                static_cast<const SI*>(idx.data), static_cast<const U*>(v.data),
                static_cast<U*>(y.data), outer, depth, inner);
            return launched("OneHot");
          });
        });
      },
      linearOnly);
});

}  // namespace opforge::ops
