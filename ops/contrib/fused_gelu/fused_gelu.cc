// opforge::FusedGelu — the seed's fused GELU plugin: GELU (erf or tanh form) followed by a short
// chain of elementwise stages, in one pass over memory, with a backward for PyTorch. A thin op: its
// attributes, reference and CUDA tactics are the engine's fused GELU's (ops/core/fused_gelu), which
// the gelu_fusion pass uses by itself. Spec: README.md beside this file.
#include "../../core/fused_gelu/gelu_reference.h"

namespace opforge::contrib {

OPFORGE_OP(fused_gelu, "opforge::FusedGelu")
    .doc(
        "GELU (erf or tanh form) followed by a chain of elementwise stages, in one pass over "
        "memory.")
    .input("x", "any shape")
    .output("y", "same shape and type")
    .with(gelu::declareGeluAttrs)
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
    .combos("FP32|FP16|BF16|FP64, FP32|FP16|BF16|FP64")
    .cpu(gelu::fusedGeluReference)
    .backward("opforge::FusedGeluGrad")
    .elementwise();

}  // namespace opforge::contrib
