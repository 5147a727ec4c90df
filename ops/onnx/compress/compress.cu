// CUDA tactic of ai.onnx::Compress, cuda.select: cub::DeviceSelect::Flagged picks the positions of
// the true entries of the condition (its first min(len(condition), axis length) entries) in order
// and writes their count K on the device (into the size-tensor output when K is data dependent,
// else into the workspace); a grid-stride kernel then copies slice j of each outer row to place q
// (rows of the real K, as the reference). Elements are moved as bytes. Nothing synchronizes.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t outer = 1, len = 1, inner = 1, n = 0, capacity = 0;
};
Geom geomOf(const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  Geom g;
  const auto& d = in[0].dims;
  const int r = static_cast<int>(d.size());
  if (!a.has("axis")) {
    g.len = prodOf(d, 0, r);
    g.capacity = out[0].dims[0];
  } else {
    const int ax = wrapAxis(a.get<int64_t>("axis"), r);
    g.outer = prodOf(d, 0, ax);
    g.len = d[ax];
    g.inner = prodOf(d, ax + 1, r);
    g.capacity = out[0].dims[ax];
  }
  g.n = std::min(in[1].numel(), g.len);
  return g;
}

constexpr size_t kAlign = 256;
size_t up(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}
size_t selectBytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceSelect::Flagged(nullptr, bytes, thrust::counting_iterator<int64_t>(0),
                             static_cast<const uint8_t*>(nullptr), static_cast<int64_t*>(nullptr),
                             static_cast<int64_t*>(nullptr), n);
  return bytes;
}
// Workspace: the selected positions [n], the count (when there is no size tensor), cub's temp.
size_t workspaceOf(const Geom& g) {
  return up(static_cast<size_t>(g.n) * sizeof(int64_t)) + up(sizeof(int64_t)) +
         up(selectBytes(g.n));
}

template <typename S>
__global__ void gatherKernel(const S* __restrict__ x, S* __restrict__ y,
                             const int64_t* __restrict__ sel, const int64_t* __restrict__ count,
                             Geom g) {
  const int64_t k = *count < g.capacity ? *count : g.capacity;
  const int64_t total = g.outer * k * g.inner, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t i = t % g.inner, q = (t / g.inner) % k, o = t / (g.inner * k);
    y[t] = x[(o * g.len + sel[q]) * g.inner + i];
  }
}

Status compressCuda(KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) {
  const TensorDesc ins[2] = {in[0].desc, in[1].desc};
  const TensorDesc outs[1] = {out[0].desc};
  const Geom g = geomOf(kc.attrs(), ins, outs);
  cudaStream_t st = streamOf(kc);
  auto* base = static_cast<uint8_t*>(kc.workspace());
  auto* sel = reinterpret_cast<int64_t*>(base);
  auto* count =
      out.size() > 1
          ? static_cast<int64_t*>(out[1].data)
          : reinterpret_cast<int64_t*>(base + up(static_cast<size_t>(g.n) * sizeof(int64_t)));
  if (g.n == 0) return cudaStatus(cudaMemsetAsync(count, 0, sizeof(int64_t), st), "Compress");
  void* temp = base + up(static_cast<size_t>(g.n) * sizeof(int64_t)) + up(sizeof(int64_t));
  size_t temp_bytes = selectBytes(g.n);
  OPFORGE_RETURN_IF_ERROR(cudaStatus(
      cub::DeviceSelect::Flagged(temp, temp_bytes, thrust::counting_iterator<int64_t>(0),
                                 static_cast<const uint8_t*>(in[1].data), sel, count, g.n, st),
      "Compress select"));
  const int64_t most = g.outer * g.capacity * g.inner;
  if (most == 0) return Status::ok();
  return visitDeviceBySize(in[0].desc.dtype, "Compress", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    gatherKernel<S><<<blocksFor(most), kThreads, 0, st>>>(
        static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), sel, count, g);
    return launched("Compress");
  });
}

size_t compressWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                         std::span<const TensorDesc> out) {
  return workspaceOf(geomOf(a, in, out));
}

bool compressApplies(const AttrMap&, std::span<const TensorDesc> in,
                     std::span<const TensorDesc> out) {
  return allLinear(in, out) && in[1].numel() < (int64_t{1} << 31);
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Compress", [](OpDef& d) {
  d.tactic(1, "cuda.select", compressCuda, compressApplies, compressWorkspace);
});

}  // namespace opforge::ops
