// CUDA tactic of ai.onnx::Tile: y[c] = x[c mod x.dims] per axis (the repeats are y's dims over
// x's).
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {
struct TileGeom {
  int rank;
  int64_t yd[kMaxDims], xd[kMaxDims], xs[kMaxDims];
};

template <typename S>
__global__ void __launch_bounds__(kThreads)
    tileKernel(const S* __restrict__ x, S* __restrict__ y, TileGeom g, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t rem = i, off = 0;
    for (int a = g.rank - 1; a >= 0; --a) {
      const int64_t q = rem / g.yd[a];
      off += ((rem - q * g.yd[a]) % g.xd[a]) * g.xs[a];
      rem = q;
    }
    y[i] = x[off];
  }
}

Status tileCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  const int r = x.desc.rank();
  if (r > kMaxDims)
    return Status::unsupported("Tile (CUDA): rank above " + std::to_string(kMaxDims));
  // Axes repeated once are plain strided copies; merge nothing else (the modulo needs each axis).
  TileGeom g{};
  g.rank = r;
  const auto xs = stridesOf(x.desc.dims);
  for (int a = 0; a < r; ++a) g.yd[a] = y.desc.dims[a], g.xd[a] = x.desc.dims[a], g.xs[a] = xs[a];
  return visitDeviceBySize(x.desc.dtype, "Tile", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    tileKernel<S><<<blocksFor(y.numel()), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(x.data), static_cast<S*>(y.data), g, y.numel());
    return launched("Tile");
  });
}

bool tileApplies(const AttrMap& a, std::span<const TensorDesc> in,
                 std::span<const TensorDesc> out) {
  return linearOnly(a, in, out) && in[0].rank() <= kMaxDims;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Tile",
                [](OpDef& d) { d.tactic(1, "cuda.modulo", tileCuda, tileApplies); });

}  // namespace opforge::ops
