// CUDA tactic of ai.onnx::MaxUnpool, cuda.scatter: Y is cleared, then a thread per element of X
// writes it at its index. An index outside [0, Y's element count) is reported through the device
// error record and skipped. Equal indices: which write lands is undefined (the reference: the
// later one).
#include "../common/cuda_common.cuh"

namespace opforge::ops {
std::vector<int64_t> maxUnpoolInferredDims(const AttrMap& attrs, const std::vector<int64_t>& x);

namespace {

// The inferred shape's strides and Y's (the inferred tensor sits at the start of each axis of Y).
struct Place {
  int rank;
  int64_t in_st[kMaxDims], out_st[kMaxDims];
};

template <typename S>
__global__ void unpoolKernel(const S* __restrict__ x, const int64_t* __restrict__ idx,
                             S* __restrict__ y, int64_t n, int64_t total, Place pl,
                             DeviceErrorRecord* rec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t t = idx[i];
    if (t < 0 || t >= total) {
      reportDeviceError(rec, kDeviceErrorRegion, 1, t, i, total, 0, 1, -1);
      continue;
    }
    int64_t o = 0, r = t;
    for (int a = 0; a < pl.rank; ++a) {
      o += r / pl.in_st[a] * pl.out_st[a];
      r %= pl.in_st[a];
    }
    y[o] = x[i];
  }
}

Status unpoolCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  cudaStream_t st = streamOf(k);
  const int64_t n = in[0].numel();
  if (out[0].numel() == 0) return Status::ok();
  const auto inf = maxUnpoolInferredDims(k.attrs(), in[0].desc.dims);
  if (static_cast<int>(inf.size()) > kMaxDims)
    return Status::unsupported("MaxUnpool (CUDA): rank above 10");
  Place pl{};
  pl.rank = static_cast<int>(inf.size());
  const auto ist = stridesOf(inf), ost = stridesOf(out[0].desc.dims);
  int64_t total = 1;
  for (int a = 0; a < pl.rank; ++a) {
    pl.in_st[a] = ist[a];
    pl.out_st[a] = ost[a];
    total *= inf[a];
  }
  OPFORGE_RETURN_IF_ERROR(
      cudaStatus(cudaMemsetAsync(out[0].data, 0, out[0].bytes(), st), "MaxUnpool"));
  if (n == 0) return Status::ok();
  const size_t es = dtypeSize(in[0].desc.dtype);
  auto launch = [&](auto tag) {
    using U = typename decltype(tag)::type;
    unpoolKernel<U><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const U*>(in[0].data), static_cast<const int64_t*>(in[1].data),
        static_cast<U*>(out[0].data), n, total, pl, k.errorRecord());
    return launched("MaxUnpool");
  };
  if (es == 8) return launch(TypeTag<uint64_t>{});
  if (es == 4) return launch(TypeTag<uint32_t>{});
  return launch(TypeTag<uint16_t>{});
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::MaxUnpool",
                [](OpDef& d) { d.tactic(1, "cuda.scatter", unpoolCuda, linearOnly); });

}  // namespace opforge::ops
