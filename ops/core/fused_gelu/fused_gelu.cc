// opforge::FusedGeluChain — the engine's fused GELU, made by the gelu_fusion pass (beside this
// file) from GELU patterns of plain ONNX graphs: GELU (erf or tanh form) followed by a short chain
// of elementwise stages, in one pass over memory. Built into libopforge, so the fusion needs no
// op library. Attributes, reference and tactics: gelu_stages.h, gelu_reference.h,
// gelu_tactics.cuh (shared with the contrib library's opforge::FusedGelu, the seed's plugin).
#include "gelu_reference.h"

namespace opforge::ops {

OPFORGE_OP(fused_gelu_chain, "opforge::FusedGeluChain")
    .doc(
        "GELU (erf or tanh form) followed by a chain of elementwise stages, in one pass over "
        "memory (the engine's fusion of GELU patterns).")
    .input("x", "any shape")
    .output("y", "same shape and type")
    .with(gelu::declareGeluAttrs)
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
    .combos("FP32|FP16|BF16|FP64, FP32|FP16|BF16|FP64")
    .cpu(gelu::fusedGeluReference)
    .elementwise();

}  // namespace opforge::ops
