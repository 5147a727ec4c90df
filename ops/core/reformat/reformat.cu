// CUDA tactic of opforge::Reformat: LINEAR <-> HWC (channels-last) transposition and/or a float
// precision change (FP32/FP16/BF16), or a plain copy.
#include "../../common/cuda_utils.cuh"
#include "../../common/device_types.cuh"
#include "reformat.h"

namespace opforge::ops {

namespace {
template <typename TI, typename TO>
__device__ __forceinline__ TO convertElem(TI v) {
  if constexpr (std::is_same_v<TI, TO>)
    return v;
  else
    return DNum<TO>::store(DNum<TI>::load(v));
}

// Same layout: an elementwise cast.
template <typename TI, typename TO>
__global__ void castKernel(const TI* __restrict__ x, TO* __restrict__ y, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] = convertElem<TI, TO>(x[i]);
}

// A batch of row-major [rows, cols] matrices, each written transposed ([cols, rows]) and cast:
// LINEAR -> HWC is [C, S] -> [S, C], HWC -> LINEAR is [S, C] -> [C, S] (S: the spatial size).
// Each block moves 32x32 tiles through shared memory, so that both the reads and the writes are
// coalesced; the y and z grid dimensions loop (tiles of rows, batches) past the grid's limits.
constexpr int kTile = 32, kTileRows = 8;
template <typename TI, typename TO>
__global__ void __launch_bounds__(kTile* kTileRows)
    transposeKernel(const TI* __restrict__ x, TO* __restrict__ y, int64_t batches, int64_t rows,
                    int64_t cols) {
  __shared__ TO tile[kTile][kTile + 1];
  const int64_t c0 = int64_t(blockIdx.x) * kTile, row_tiles = (rows + kTile - 1) / kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t b = blockIdx.z; b < batches; b += gridDim.z) {
    const TI* xb = x + b * rows * cols;
    TO* yb = y + b * rows * cols;
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      const int64_t r0 = rt * kTile;
      for (int j = ty; j < kTile; j += kTileRows) {
        const int64_t r = r0 + j, c = c0 + tx;
        if (r < rows && c < cols) tile[j][tx] = convertElem<TI, TO>(xb[r * cols + c]);
      }
      __syncthreads();
      for (int j = ty; j < kTile; j += kTileRows) {
        const int64_t c = c0 + j, r = r0 + tx;
        if (c < cols && r < rows) yb[c * rows + r] = tile[tx][j];
      }
      __syncthreads();
    }
  }
}

// The same transposition when the channel side is narrow (C <= kNarrow: an image's 3 channels):
// a 32x32 tile would hold 3 useful rows. One thread per spatial position moves its C values;
// consecutive threads read consecutive addresses of each channel plane and write consecutive
// C-element groups, so both sides stay coalesced.
constexpr int64_t kNarrow = 8;
template <typename TI, typename TO, bool kToHwc>
__global__ void narrowKernel(const TI* __restrict__ x, TO* __restrict__ y, int64_t batches,
                             int64_t c, int64_t s) {
  const int64_t total = batches * s;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / s, p = i - b * s;
    const TI* xb = x + b * c * s;
    TO* yb = y + b * c * s;
    for (int64_t k = 0; k < c; ++k) {
      if constexpr (kToHwc)
        yb[p * c + k] = convertElem<TI, TO>(xb[k * s + p]);
      else
        yb[k * s + p] = convertElem<TI, TO>(xb[p * c + k]);
    }
  }
}

template <typename TI, typename TO>
Status launchTyped(const Tensor& x, const Tensor& y, cudaStream_t st) {
  const auto& d = x.desc.dims;
  const bool transpose = !formatsShareBytes(x.desc.format, y.desc.format, x.desc.dims);
  const auto* px = static_cast<const TI*>(x.data);
  auto* py = static_cast<TO*>(y.data);
  if (!transpose) {
    castKernel<TI, TO><<<gridFor(x.numel(), 256), 256, 0, st>>>(px, py, x.numel());
    return lastLaunch("Reformat cuda");
  }
  int64_t s = 1;
  for (size_t a = 2; a < d.size(); ++a) s *= d[a];
  const bool to_hwc = y.desc.format == Format::kHWC;
  if (d[1] <= kNarrow) {
    const int64_t total = d[0] * s;
    if (to_hwc)
      narrowKernel<TI, TO, true><<<gridFor(total, 256), 256, 0, st>>>(px, py, d[0], d[1], s);
    else
      narrowKernel<TI, TO, false><<<gridFor(total, 256), 256, 0, st>>>(px, py, d[0], d[1], s);
    return lastLaunch("Reformat cuda");
  }
  const int64_t rows = to_hwc ? d[1] : s, cols = to_hwc ? s : d[1];
  const int64_t col_tiles = (cols + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
  if (col_tiles > int64_t{INT32_MAX})
    return Status::outOfRange("Reformat cuda: " + std::to_string(cols) +
                              " columns are more than the grid holds");
  const dim3 grid(static_cast<unsigned>(col_tiles),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(d[0], 65535)));
  transposeKernel<TI, TO><<<grid, dim3(kTile, kTileRows), 0, st>>>(px, py, d[0], rows, cols);
  return lastLaunch("Reformat cuda");
}

constexpr unsigned kReformatFloats = kF32 | kF16 | kBF16;

Status reformatCuda(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  cudaStream_t st = streamOf(ctx);
  if (x.numel() == 0) return Status::ok();
  const bool transpose = !formatsShareBytes(x.desc.format, y.desc.format, x.desc.dims);
  if (x.desc.dtype == y.desc.dtype) {
    if (!transpose) return copyDevice(y.data, x.data, y.bytes(), st, "Reformat copy");
    return visitDeviceBySize(x.desc.dtype, "Reformat", [&](auto tag) {
      using T = typename decltype(tag)::type;
      return launchTyped<T, T>(x, y, st);
    });
  }
  return visitDevice<kReformatFloats>(x.desc.dtype, "Reformat", [&](auto a) {
    return visitDevice<kReformatFloats>(y.desc.dtype, "Reformat", [&](auto b) {
      return launchTyped<typename decltype(a)::type, typename decltype(b)::type>(x, y, st);
    });
  });
}
// In a plan's storage of its input it writes nothing; given its own buffer it copies the bytes.
Status viewCuda(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  return copyDevice(out[0].data, in[0].data, out[0].bytes(), streamOf(ctx), "Reformat");
}
}  // namespace

OPFORGE_TACTICS("opforge::Reformat", [](OpDef& d) {
  d.tactic(1, "cuda.reformat", reformatCuda);
  d.viewTactic(2, "cuda.view", viewCuda, reformatIsView);
});

}  // namespace opforge::ops
