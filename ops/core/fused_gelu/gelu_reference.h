// gelu_reference.h — the CPU reference (tactic 0) of a fused GELU node, shared by the engine's
// opforge::FusedGeluChain and the contrib library's opforge::FusedGelu: every stage in float64,
// one rounding to the storage type (the oracle).
#pragma once

#include "../../common/dtype_dispatch.h"
#include "gelu_stages.h"

namespace opforge::gelu {

// Every stage is evaluated in float64 and the result rounded once to the storage type.
inline Status fusedGeluReference(KernelContext& ctx, std::span<const Tensor> in,
                                 std::span<const Tensor> out) {
  const GeluStages s = geluStages(ctx.attrs());
  return ops::visitTypes<ops::kFloats>(in[0].desc.dtype, "FusedGelu", [&](auto num) -> Status {
    using N = decltype(num);
    const auto* x = static_cast<const typename N::S*>(in[0].data);
    auto* y = static_cast<typename N::S*>(out[0].data);
    const int64_t n = in[0].numel();
    for (int64_t i = 0; i < n; ++i)
      y[i] = N::store(static_cast<typename N::C>(stagesRef(s, static_cast<double>(N::load(x[i])))));
    return Status::ok();
  });
}

}  // namespace opforge::gelu
