// nary_cuda.cuh — the CUDA tactic of ONNX's variadic broadcasting ops (Max, Min, Sum, Mean): one
// pass over up to 8 inputs, accumulating in the compute type like the reference; more inputs
// keep the accumulator in the workspace between passes.
#pragma once

#include "broadcast_check.h"
#include "elementwise.cuh"

namespace opforge::ops {

inline size_t naryComputeSize(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 ? 4 : dtypeSize(t);
}

template <unsigned Types, typename F>
auto naryTactics(const char* name, F f, bool mean = false) {
  return [=](OpDef& d) {
    d.tactic(
        1, "cuda.nary",
        [=](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
          for (const Tensor& x : in)  // a plan's dims (edited) must still broadcast
            OPFORGE_RETURN_IF_ERROR(checkBroadcast(x.desc.dims, out[0].desc.dims, name));
          return visitDevice<Types>(out[0].desc.dtype, name, [&](auto tag) -> Status {
            using S = typename decltype(tag)::type;
            return launchNary<S>(in, out[0], k.workspace(), mean, f, streamOf(k), name);
          });
        },
        linearOnly,
        [](const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc> out)
            -> size_t { return naryWorkspace(in.size(), out[0], naryComputeSize(out[0].dtype)); });
  };
}

// max / min that propagate NaN (numpy's maximum / minimum), as nary.h.
struct NanMaxF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if (dm::isnan(a) || dm::isnan(b)) return dm::isnan(a) ? a : b;
    return a < b ? b : a;
  }
};
struct NanMinF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if (dm::isnan(a) || dm::isnan(b)) return dm::isnan(a) ? a : b;
    return b < a ? b : a;
  }
};
struct PlusF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return static_cast<C>(a + b);
  }
};

}  // namespace opforge::ops
