// A 2-D convolution as a patch gather and one cuBLASLt GEMM, the Conv / FusedConv tactics
// cuda.patch_lt<rank> (conv_tactics.cuh): for windows that overlap little or not at all, where the
// gathered patches take no more memory than twice the input — ViT's patch embedding (16x16, stride
// 16, 3 input channels) above all, where cuDNN's engines, built for many channels and small
// filters, take about 18x the GEMM's time.
//
// Patches P[n][p][q] = X[n][c][oh * sh - ph + kh * dh][ow * sw - pw + kw * dw] with p = (oh, ow)
// and q = (c, kh, kw), zero outside the input; then, for every image, Y[n] (M x OH*OW) = W (M x K)
// * P[n]^T with K = C * KH * KW (W's own layout, [M][C][KH][KW]), one batched GEMM whose W has
// batch stride 0. Bias, residual and activation: the convolutions' epilogue kernel (convEpilogue).
#include <algorithm>

#include "conv_cuda.h"
#include "cuda_common.cuh"
#include "gemm_cuda.h"

namespace opforge::ops {
namespace {

constexpr size_t kPatchAlign = 256;
constexpr int64_t kPatchMaxBytes = int64_t{1} << 30;

struct PatchGeom : Conv2dGeom {
  __host__ __device__ int64_t k() const { return c * kh * kw; }
  __host__ __device__ int64_t p() const { return oh * ow; }
};

PatchGeom patchGeom(const ConvArgs& a) {
  return PatchGeom{conv2dGeom(a)};
}

// One thread per element of P (any geometry): E is the element's bits (uint16_t or uint32_t).
template <typename E>
__global__ void __launch_bounds__(kThreads)
    patchGatherKernel(const E* __restrict__ x, E* __restrict__ p, PatchGeom g) {
  const int64_t kk = g.k(), total = g.n * g.p() * kk;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t q = i % kk, r = i / kk;
    const int64_t ow = r % g.ow, oh = (r / g.ow) % g.oh, n = r / (g.ow * g.oh);
    const int64_t kw = q % g.kw, kh = (q / g.kw) % g.kh, c = q / (int64_t(g.kw) * g.kh);
    const int64_t y = oh * g.sh - g.ph + kh * g.dh, xx = ow * g.sw - g.pw + kw * g.dw;
    E v{};
    if (y >= 0 && y < g.ih && xx >= 0 && xx < g.iw) v = x[((n * g.c + c) * g.ih + y) * g.iw + xx];
    p[i] = v;
  }
}

// The same in 16-byte pieces of a window row (KW elements, 16-byte multiples, no dilation across
// the row, every window inside the input horizontally, input rows and column starts 16-byte
// aligned): a thread copies one piece; rows outside the input (vertical padding) are zeros.
__global__ void __launch_bounds__(kThreads)
    patchGatherVecKernel(const uint4* __restrict__ x, uint4* __restrict__ p, PatchGeom g,
                         int pieces, int64_t row_vecs, int64_t col_vecs) {
  const int64_t runs = g.n * g.p() * g.c * g.kh, total = runs * pieces;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t j = i % pieces, r = i / pieces;
    const int64_t kh = r % g.kh, c = (r / g.kh) % g.c, pos = r / (int64_t(g.kh) * g.c);
    const int64_t ow = pos % g.ow, oh = (pos / g.ow) % g.oh, n = pos / (g.ow * g.oh);
    const int64_t y = oh * g.sh - g.ph + kh * g.dh;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (y >= 0 && y < g.ih) v = x[((n * g.c + c) * g.ih + y) * row_vecs + ow * col_vecs + j];
    p[i] = v;  // P's rows are (c, kh, kw): run r's pieces are consecutive
  }
}

// The batched GEMM over the patches at `patches`.
GemmArgs patchGemm(const ConvArgs& a, const PatchGeom& g, const void* patches) {
  GemmArgs m;
  m.dtype = a.dtype;
  m.m = a.m;
  m.n = g.p();
  m.k = g.k();
  m.a = a.w;
  m.lda = m.k;
  m.a_stride = 0;
  m.b = patches;
  m.tb = true;  // P[n] is [p][q]
  m.ldb = m.k;
  m.b_stride = m.n * m.k;
  m.y = a.y;
  m.ldy = m.n;
  m.y_stride = a.m * m.n;
  m.batch = a.n;
  m.tf32 = a.tf32;
  return m;
}

size_t patchBytes(const ConvArgs& a, const PatchGeom& g) {
  const size_t b = static_cast<size_t>(g.n * g.p() * g.k()) * dtypeSize(a.dtype);
  return (b + kPatchAlign - 1) / kPatchAlign * kPatchAlign;
}

// The geometry the tactic takes, before asking cuBLASLt.
bool patchShapeOk(const ConvArgs& a) {
  if (a.hwc || a.nd != 2 || a.group != 1 || a.n < 1 || a.c < 1 || a.m < 1) return false;
  if (a.dtype != DataType::kFloat32 && a.dtype != DataType::kFloat16 &&
      a.dtype != DataType::kBFloat16)
    return false;
  if (a.tf32 && a.dtype != DataType::kFloat32) return false;
  if (a.k[0] * a.k[1] <= 1) return false;  // 1x1: the 1x1 tactics
  for (int i = 0; i < 2; ++i)
    if (a.k[i] > 4096 || a.s[i] > 4096 || a.d[i] > 4096 || a.pb[i] > 4096 || a.osz[i] < 1 ||
        a.isz[i] < 1)
      return false;
  const int64_t kk = a.c * a.k[0] * a.k[1], pp = a.osz[0] * a.osz[1];
  const int64_t in = a.c * a.isz[0] * a.isz[1];
  // Little overlap: the patches at most twice the input (ViT's 16x16 / 16: once).
  if (kk > (int64_t{1} << 30) || pp > (int64_t{1} << 30) || kk * pp > 2 * in) return false;
  return a.n * kk * pp * static_cast<int64_t>(dtypeSize(a.dtype)) <= kPatchMaxBytes;
}

}  // namespace

bool convPatchApplies(const ConvArgs& a, int rank, size_t* workspace) {
  if (!patchShapeOk(a)) return false;
  const PatchGeom g = patchGeom(a);
  // Build time: the engine's aligned tensors (pointers are not read).
  const GemmArgs m = patchGemm(a, g, reinterpret_cast<const void*>(uintptr_t{256}));
  if (!gemmLtApplies(m, rank)) return false;
  if (workspace) *workspace = patchBytes(a, g) + kLtWorkspace;
  return true;
}

Status convPatch(const ConvArgs& a, int rank, void* workspace, size_t workspace_size,
                 void* stream) {
  if (!patchShapeOk(a))
    return Status::unsupported(
        "cuda.patch_lt: not a LINEAR 2-D convolution of one group whose patches fit twice the "
        "input");
  const PatchGeom g = patchGeom(a);
  const size_t pb = patchBytes(a, g);
  if (workspace == nullptr || workspace_size < pb + kLtWorkspace)
    return Status::internal("cuda.patch_lt: workspace of " + std::to_string(workspace_size) +
                            " bytes, " + std::to_string(pb + kLtWorkspace) + " needed");
  auto st = static_cast<cudaStream_t>(stream);
  const size_t es = dtypeSize(a.dtype);
  const int64_t row_bytes = g.kw * static_cast<int64_t>(es);
  const bool vec =
      row_bytes % 16 == 0 && g.dw == 1 && g.pw == 0 && (g.ow - 1) * g.sw + g.kw <= g.iw &&
      (g.iw * static_cast<int64_t>(es)) % 16 == 0 && (g.sw * static_cast<int64_t>(es)) % 16 == 0 &&
      aligned16(a.x) && aligned16(workspace);
  if (vec) {
    const int pieces = static_cast<int>(row_bytes / 16);
    const int64_t total = g.n * g.p() * g.c * g.kh * pieces;
    patchGatherVecKernel<<<blocksFor(total), kThreads, 0, st>>>(
        static_cast<const uint4*>(a.x), static_cast<uint4*>(workspace), g, pieces,
        g.iw * static_cast<int64_t>(es) / 16, g.sw * static_cast<int64_t>(es) / 16);
  } else if (es == 4) {
    patchGatherKernel<uint32_t><<<blocksFor(g.n * g.p() * g.k()), kThreads, 0, st>>>(
        static_cast<const uint32_t*>(a.x), static_cast<uint32_t*>(workspace), g);
  } else {
    patchGatherKernel<uint16_t><<<blocksFor(g.n * g.p() * g.k()), kThreads, 0, st>>>(
        static_cast<const uint16_t*>(a.x), static_cast<uint16_t*>(workspace), g);
  }
  OPFORGE_RETURN_IF_ERROR(launched("Conv (patch gather)"));
  OPFORGE_RETURN_IF_ERROR(gemmLt(patchGemm(a, g, workspace), rank,
                                 static_cast<char*>(workspace) + pb, workspace_size - pb, stream));
  return convEpilogue(a, stream);
}

}  // namespace opforge::ops
