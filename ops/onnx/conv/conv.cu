// CUDA tactics of ai.onnx::Conv: the shared convolution tactics (common/conv_tactics.cuh) —
// 1-5 cuDNN legacy algorithms (2: precomputed implicit GEMM with the bias fused), 6 direct,
// 7-12 cuDNN graph-API engines (LINEAR or channels-last).
#include "../common/conv_tactics.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Conv",
                [](OpDef& d) { ConvTactics<convArgsOf>::addAll(d, "cuda.dnn.precomp_gemm"); });

}  // namespace opforge::ops
