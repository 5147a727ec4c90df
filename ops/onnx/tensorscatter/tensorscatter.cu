// CUDA tactic of ai.onnx::TensorScatter, cuda.scatter: past_cache copied to the output (nothing
// when the output is past_cache, written in place), then one thread per copy unit of the update
// (the widest of 16, 8, 4, 2 or 1 bytes dividing a row and both addresses) writes it at its cache
// position, reading write_indices on the device. A bad write index (negative; in linear mode one
// whose rows run past max_sequence_length) is reported through the layer's device error record
// (kDeviceErrorRegion: the rows [w, w + sequence_length) against max_sequence_length) and that
// batch's rows are skipped: nothing is written outside the cache.
#include "../common/index_cuda.cuh"
#include "tensorscatter.h"

namespace opforge::ops {
namespace {

struct TsDev {
  int64_t per_batch, outer, max_seq, seq;
  int64_t units;  // copy units per row
  int axis;
  bool circular;
};

template <typename U>
__global__ void tensorScatterKernel(U* __restrict__ y, const U* __restrict__ up,
                                    const int64_t* __restrict__ wi, TsDev g, int64_t total,
                                    DeviceErrorRecord* rec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < total; p += stride) {
    const int64_t j = p % g.units, q = p / g.units;
    const int64_t s = q % g.seq, o = q / g.seq;
    const int64_t b = o / g.per_batch;
    const int64_t w = wi ? wi[b] : 0;
    if (w < 0 || (!g.circular && w > g.max_seq - g.seq)) {
      // One report per batch: its first row's first unit.
      if (s == 0 && j == 0 && o == b * g.per_batch)
        reportDeviceError(rec, kDeviceErrorRegion, 2, w, b, g.max_seq, g.axis, g.seq, 0);
      continue;
    }
    int64_t t = g.circular ? w % g.max_seq + s : w + s;
    if (t >= g.max_seq) t -= g.max_seq;  // circular only: t < 2 * max_seq
    y[(o * g.max_seq + t) * g.units + j] = up[p];
  }
}

Status tensorScatterCuda(KernelContext& k, std::span<const Tensor> in,
                         std::span<const Tensor> out) {
  const Tensor &x = in[0], &u = in[1], &y = out[0];
  OPFORGE_ASSIGN_OR_RETURN(TensorScatterGeom g, tensorScatterGeom(k.attrs(), x.desc, u.desc));
  const bool has_w = present(in, 2);
  if (has_w && in[2].numel() != g.batch)
    return Status::invalid("TensorScatter (CUDA): input 'write_indices' has " +
                           std::to_string(in[2].numel()) + " entries; the batch is " +
                           std::to_string(g.batch));
  cudaStream_t st = streamOf(k);
  OPFORGE_RETURN_IF_ERROR(copyDevice(y.data, x.data, y.bytes(), st, "TensorScatter"));
  const int64_t row = g.inner * static_cast<int64_t>(dtypeSize(x.desc.dtype));
  const int64_t total_bytes = g.outer * g.seq * row;
  if (total_bytes == 0) return Status::ok();
  const size_t unit = copyUnit(row, {y.data, u.data});
  TsDev d{};
  d.per_batch = g.per_batch;
  d.outer = g.outer;
  d.max_seq = g.max_seq;
  d.seq = g.seq;
  d.units = row / static_cast<int64_t>(unit);
  d.axis = g.axis;
  d.circular = g.circular;
  const int64_t total = total_bytes / static_cast<int64_t>(unit);
  const int64_t* wi = has_w ? static_cast<const int64_t*>(in[2].data) : nullptr;
  DeviceErrorRecord* rec = k.errorRecord();
  return visitUnit(unit, [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    tensorScatterKernel<U><<<blocksFor(total), kThreads, 0, st>>>(
        static_cast<U*>(y.data), static_cast<const U*>(u.data), wi, d, total, rec);
    return launched("TensorScatter");
  });
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::TensorScatter",
                [](OpDef& d) { d.tactic(1, "cuda.scatter", tensorScatterCuda, linearOnly); });

}  // namespace opforge::ops
