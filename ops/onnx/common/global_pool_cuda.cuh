// global_pool_cuda.cuh — GlobalAveragePool / GlobalMaxPool on the device: the mean /
// NaN-propagating maximum over the spatial axes of every (n, c), through the reduction kernels
// (double accumulation, like the reference).
#pragma once

#include "reduce_cuda.cuh"

namespace opforge::ops {

template <ReduceKind K, ReduceMode M>
KernelFn globalPoolFn(const char* name) {
  return
      [name](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor& x = in[0];
        const int r = x.desc.rank();
        ReducePlan p;
        p.ny = out[0].numel();
        p.count = prodOf(x.desc.dims, 2, r);
        bool mask[kMaxDims];
        for (int a = 0; a < r; ++a) mask[a] = a >= 2;
        buildReduceGeom(r, x.desc.dims.data(), mask, &p.host);
        return visitDevice<kFloats>(x.desc.dtype, name, [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          return launchReduce<K, S, M>(x, out[0], p, streamOf(k), name);
        });
      };
}

template <ReduceKind K>
auto globalPoolTactics(const char* name) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.block", globalPoolFn<K, ReduceMode::kBlock>(name), reduceApplies);
    d.tactic(2, "cuda.warp", globalPoolFn<K, ReduceMode::kWarp>(name), reduceApplies);
    d.tactic(3, "cuda.thread", globalPoolFn<K, ReduceMode::kThread>(name), reduceApplies);
  };
}

}  // namespace opforge::ops
