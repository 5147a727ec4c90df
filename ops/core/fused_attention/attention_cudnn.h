// attention_cudnn.h — FusedAttention's cuDNN tactics: the cuDNN frontend's fused attention (its
// SDPA node, the flash-attention engines PyTorch's scaled_dot_product_attention also reaches on
// Hopper) over opforge's attention views, FP16 and BF16. Host code in attention_cudnn.cc (compiled
// when the frontend's headers were found: OPFORGE_WITH_CUDNN_FRONTEND); the row fix-up in
// fused_attention.cu.
//
// The graph also writes each score row's log-sum-exp ("stats", float, in the workspace): a row
// whose stats are not finite saw only -inf or a NaN, so its probabilities are NaN in the
// reference — the fix-up writes the row as NaN, or as zeros under nan_to_zero, whatever cuDNN
// wrote there. Rows with finite stats are cuDNN's output as is.
#pragma once

#include <cstddef>

#include "attention_views.h"

namespace opforge::ops {

// Engines tried per problem (tactic ranks 0 .. kCudnnAttnRanks - 1).
constexpr int kCudnnAttnRanks = 2;

// Whether engine `rank` of cuDNN's list for this geometry and type builds on the current device;
// `workspace`: the bytes it needs beside the stats. Builds and caches the graph on first use.
bool cudnnAttnApplies(const AttnGeom& g, DataType t, int rank, size_t* workspace);

// Runs engine `rank`: Y = attention(Q, K, V[, bias]) on `stream`, the rows' stats to `stats`
// (B * H * Sq floats). `workspace` holds at least what cudnnAttnApplies said.
Status cudnnAttnRun(const AttnGeom& g, DataType t, int rank, const void* q, const void* k,
                    const void* v, const void* bias, void* y, float* stats, void* workspace,
                    size_t workspace_size, void* stream);

}  // namespace opforge::ops
