// conv_cuda.h — convolutions on the device for Conv, ConvTranspose and opforge::FusedConv.
//
// cuDNN (when opforge is built with it): forward convolution with one tactic per algorithm
// (implicit GEMM, precomputed implicit GEMM, GEMM, Winograd, non-fused Winograd); FP32 restricted
// to FMA kernels (no TF32), FP16/BF16 on tensor cores accumulating in FP32, FP64. Bias, residual
// and ReLU of the fused op go through cudnnConvolutionBiasActivationForward where cuDNN offers it
// (precomputed implicit GEMM), else a small epilogue kernel. Transposed convolution is cuDNN's
// backward-data convolution. cuDNN needs symmetric padding; other cases use the direct kernels.
// Handles are created lazily, one per thread and device.
//
// Direct kernels (every case the references handle): one thread per output element, accumulation
// in float (double for FP64).
#pragma once

#include <vector>

#include "gemm_cuda.h"
#include "opforge/op.h"

namespace opforge::ops {

struct ConvArgs {
  DataType dtype = DataType::kFloat32;
  int nd = 0;                              // spatial axes
  int64_t n = 0, c = 0, m = 0, group = 1;  // batch, input channels, output channels
  std::vector<int64_t> isz, osz, k, s, d, pb, pe;
  const void* x = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;  // [m] or nullptr
  const void* z = nullptr;     // residual, y's shape, or nullptr (y = act(conv + bias + z))
  void* y = nullptr;
  Act act = Act::kNone;
  bool hwc = false;   // x, w, z and y channels-last (Format::kHWC; w as (m, k..., c / group))
  bool tf32 = false;  // FP32 data: graph engines on TF32 tensor cores are accepted
};

// A 2-D convolution's geometry (ConvArgs with nd = 2) as kernels take it by value: sizes, filter,
// strides, dilations and the leading pads.
struct Conv2dGeom {
  int64_t n, c, ih, iw, oh, ow;
  int kh, kw, sh, sw, dh, dw, ph, pw;
};
inline Conv2dGeom conv2dGeom(const ConvArgs& a) {
  auto i = [](int64_t v) { return static_cast<int>(v); };
  return Conv2dGeom{a.n,       a.c,       a.isz[0],  a.isz[1],  a.osz[0],  a.osz[1],   i(a.k[0]),
                    i(a.k[1]), i(a.s[0]), i(a.s[1]), i(a.d[0]), i(a.d[1]), i(a.pb[0]), i(a.pb[1])};
}

// cuDNN algorithms offered as tactics (index into the forward or backward-data list).
constexpr int kDnnFwdAlgos = 5;
constexpr int kDnnBwdAlgos = 4;

// cuDNN graph (backend) API engines offered as tactics: the rank-th accepted engine configuration
// of cuDNN's heuristics and fallback lists for the problem (conv_dnn_graph.cc says which are
// accepted and in which order). LINEAR or HWC tensors; FP32 (TF32 engines only with
// ConvArgs::tf32), FP16, BF16; the epilogue fused when an engine offers it.
constexpr int kDnnGraphTactics = 16;

bool haveCudnn();
// This thread's cuDNN handle (a cudnnHandle_t) on the current device, bound to `stream`.
Result<void*> cudnnHandleFor(void* stream);
bool convGraphApplies(const ConvArgs& a, int rank, size_t* workspace);
Status convGraph(const ConvArgs& a, int rank, void* workspace, size_t workspace_size, void* stream);
// Runs the engine only; true when it applied the epilogue (conv_dnn_graph.cc).
Result<bool> convGraphRun(const ConvArgs& a, int rank, void* workspace, size_t workspace_size,
                          void* stream);
// Forward convolution through cuDNN algorithm `algo`; *workspace gets its size.
bool convDnnApplies(const ConvArgs& a, int algo, size_t* workspace);
Status convDnn(const ConvArgs& a, int algo, void* workspace, size_t workspace_size, void* stream);
Status convDirect(const ConvArgs& a, void* stream);
// A 2-D depthwise convolution (group = C = M) on channels-last tensors (conv_depthwise.cu);
// `columns` (4 or 8): the output columns a thread computes.
bool convDepthwiseApplies(const ConvArgs& a);
Status convDepthwise(const ConvArgs& a, int columns, void* stream);
// The same from shared-memory tiles: square 3, 5 or 7 filters, stride 1 or 2, no dilation, C a
// multiple of the 16-byte vector (conv_depthwise.cu); `small`: half-size blocks (more of them).
bool convDepthwiseTileApplies(const ConvArgs& a, bool small);
Status convDepthwiseTile(const ConvArgs& a, bool small, void* stream);
bool convDirectApplies(const ConvArgs& a);
// A LINEAR 2-D convolution of one group as a patch gather into the workspace and one batched
// cuBLASLt GEMM (algorithm `rank` of its heuristics), the epilogue after it (conv_patch.cu); where
// the patches take at most twice the input's memory (ViT's patch embedding). *workspace gets the
// size (the patches and cuBLASLt's workspace).
bool convPatchApplies(const ConvArgs& a, int rank, size_t* workspace);
Status convPatch(const ConvArgs& a, int rank, void* workspace, size_t workspace_size, void* stream);
// y = act(y + bias + z) in place over a's output (nothing when there is no bias, residual or
// activation): the epilogue of tactics whose convolution runs without it.
Status convEpilogue(const ConvArgs& a, void* stream);

// Transposed convolution (ONNX ConvTranspose; W is (C, M / group, k...)); pads are the resolved
// begin/end pads, osz the output size.
bool convTransposeDnnApplies(const ConvArgs& a, int algo, size_t* workspace);
Status convTransposeDnn(const ConvArgs& a, int algo, void* workspace, size_t workspace_size,
                        void* stream);
Status convTransposeDirect(const ConvArgs& a, void* stream);

}  // namespace opforge::ops
