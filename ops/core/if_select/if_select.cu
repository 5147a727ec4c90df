// CUDA tactic of opforge::IfSelect: one kernel reads the condition on the device, copies the
// branch taken into the output (16-byte words where everything is aligned, else bytes) and writes
// the lengths of the 'axes' into the size-tensor outputs. Nothing synchronizes: the runtime reads
// the sizes afterwards, as for any data-dependent output; a branch taken larger than the output is
// reported through the layer's device error record (copied only as far as the output reaches).
#include "../../onnx/common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Sides {
  const void* src[2];  // then, else
  int64_t bytes[2];
  int64_t len[2][kMaxDims];  // per size tensor j: the length of axes[j] in each branch
  int64_t* size_out[kMaxDims];
  int num_sizes;
};

template <typename W>
__global__ void selectKernel(const uint8_t* __restrict__ cond, W* __restrict__ y, Sides s,
                             int64_t out_bytes, DeviceErrorRecord* rec) {
  const int b = *cond != 0 ? 0 : 1;
  const W* src = static_cast<const W*>(s.src[b]);
  // Only the branch taken is copied, and only it must fit (the other never ran: its description
  // is its allocation, which may pass the output's size this run); on the host neither is known.
  int64_t bytes = s.bytes[b];
  if (bytes > out_bytes) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      reportDeviceError(rec, kDeviceErrorSize, 1 + b, bytes, 0, out_bytes, 0);
    bytes = out_bytes;
  }
  const int64_t n = bytes / static_cast<int64_t>(sizeof(W));
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n; i += stride) y[i] = src[i];
  if (first < s.num_sizes) *s.size_out[first] = s.len[b][first];
}

Status ifSelectCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto axes = k.attr<std::vector<int64_t>>("axes");
  if (axes.size() > static_cast<size_t>(kMaxDims))
    return Status::unsupported("IfSelect (CUDA): more than " + std::to_string(kMaxDims) + " axes");
  Sides s{};
  bool words = aligned16(out[0].data) && out[0].bytes() % 16 == 0;
  for (int i = 0; i < 2; ++i) {
    const Tensor& t = in[1 + i];
    s.src[i] = t.data;
    s.bytes[i] = static_cast<int64_t>(t.bytes());
    words = words && aligned16(t.data) && t.bytes() % 16 == 0;
    for (size_t j = 0; j < axes.size(); ++j) s.len[i][j] = t.desc.dims[axes[j]];
  }
  s.num_sizes = static_cast<int>(axes.size());
  for (size_t j = 0; j < axes.size(); ++j) s.size_out[j] = static_cast<int64_t*>(out[1 + j].data);
  const int64_t most = std::min<int64_t>(std::max(s.bytes[0], s.bytes[1]), out[0].bytes());
  const int64_t out_bytes = static_cast<int64_t>(out[0].bytes());
  const auto* cond = static_cast<const uint8_t*>(in[0].data);
  cudaStream_t st = streamOf(k);
  if (words)
    selectKernel<<<blocksFor(std::max<int64_t>(most / 16, 1)), kThreads, 0, st>>>(
        cond, static_cast<uint4*>(out[0].data), s, out_bytes, k.errorRecord());
  else
    selectKernel<<<blocksFor(std::max<int64_t>(most, 1)), kThreads, 0, st>>>(
        cond, static_cast<uint8_t*>(out[0].data), s, out_bytes, k.errorRecord());
  return launched("IfSelect");
}

}  // namespace

OPFORGE_TACTICS("opforge::IfSelect",
                [](OpDef& d) { d.tactic(1, "cuda.select", ifSelectCuda, linearOnly); });

}  // namespace opforge::ops
