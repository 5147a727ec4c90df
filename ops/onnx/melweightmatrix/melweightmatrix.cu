// CUDA tactic of ai.onnx::MelWeightMatrix, cuda.direct: a thread per output element (spectrogram
// bin j, mel bin i) reads the five scalars on the device, computes the points of its triangle
// (melweightmatrix.h, in double as the reference) and its own weight. Values the reference would
// refuse, or num_mel_bins / dft_length that do not give the planned shape, are reported through
// the device error record (the output is then zero). The record's text is made for integers: a
// bad float input is quoted truncated, with an approximate range.
#include "melweightmatrix.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

__device__ __forceinline__ double loadFloat(const void* p, DataType t) {
  switch (t) {
    case DataType::kFloat64:
      return *static_cast<const double*>(p);
    case DataType::kFloat16:
      return __half2float(*static_cast<const __half*>(p));
    case DataType::kBFloat16:
      return __bfloat162float(*static_cast<const __nv_bfloat16*>(p));
    default:
      return *static_cast<const float*>(p);
  }
}

struct MelArgs {
  const void* in[5];
  DataType type[5];
  int64_t spec, bins;  // the planned output shape
};

// Reports (block 0, thread 0) why the scalars can not give the planned output; false when they
// can. The shape rule and the run-time shape checks (num_mel_bins, dft_length >= 1) have seen the
// values the plan was made for, so this finds only data that differ from them.
__device__ bool melBad(const MelParams& p, const MelArgs& a, DeviceErrorRecord* rec) {
  const bool shape_ok = p.bins == a.bins && p.dft >= 1 && p.dft / 2 + 1 == a.spec;
  if (shape_ok && melBadInput(p) < 0) return false;
  if (blockIdx.x != 0 || threadIdx.x != 0) return true;
  if (p.bins != a.bins)
    reportDeviceError(rec, kDeviceErrorSize, 0, p.bins, 0, a.bins, 1);
  else if (p.dft < 1)
    reportDeviceError(rec, kDeviceErrorNegative, 1, p.dft, 0, 0, 0);
  else if (!shape_ok)
    reportDeviceError(rec, kDeviceErrorSize, 1, p.dft / 2 + 1, 0, a.spec, 0);
  else if (p.rate == 0)
    reportDeviceError(rec, kDeviceErrorDivZero, 2, 0, 0, 0, 0);
  else if (p.rate < 0)
    reportDeviceError(rec, kDeviceErrorNegative, 2, p.rate, 0, 0, 0);
  else if (melBadInput(p) == 3)  // lower_edge_hertz outside [0, upper_edge_hertz)
    reportDeviceError(rec, kDeviceErrorValue, 3, static_cast<int64_t>(p.lower), 0,
                      static_cast<int64_t>(ceil(p.upper > 0 ? p.upper : 0)), 0);
  else  // upper_edge_hertz above sample_rate / 2
    reportDeviceError(rec, kDeviceErrorValue, 4, static_cast<int64_t>(p.upper), 0, p.rate / 2 + 1,
                      0);
  return true;
}

template <typename S>
__global__ void melKernel(S* __restrict__ y, MelArgs a, DeviceErrorRecord* rec) {
  using C = typename DNum<S>::C;
  MelParams p;
  p.bins = loadIndex(a.in[0], a.type[0] == DataType::kInt64, 0);
  p.dft = loadIndex(a.in[1], a.type[1] == DataType::kInt64, 0);
  p.rate = loadIndex(a.in[2], a.type[2] == DataType::kInt64, 0);
  p.lower = loadFloat(a.in[3], a.type[3]);
  p.upper = loadFloat(a.in[4], a.type[4]);
  const bool bad = melBad(p, a, rec);
  const int64_t total = a.spec * a.bins, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    double w = 0;
    if (!bad) {
      const int64_t j = e / a.bins, i = e % a.bins;
      w = melWeight(j, melPoint(p, i), melPoint(p, i + 1), melPoint(p, i + 2));
    }
    y[e] = DNum<S>::store(static_cast<C>(w));
  }
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::MelWeightMatrix", [](OpDef& d) {
  d.tactic(
      1, "cuda.direct",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        MelArgs a{};
        for (int i = 0; i < 5; ++i) a.in[i] = in[i].data, a.type[i] = in[i].desc.dtype;
        a.spec = out[0].desc.dims[0];
        a.bins = out[0].desc.dims[1];
        const int64_t total = out[0].numel();
        if (total == 0) return Status::ok();
        return visitDevice<kNumeric>(out[0].desc.dtype, "MelWeightMatrix", [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          melKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(static_cast<S*>(out[0].data),
                                                                       a, k.errorRecord());
          return launched("MelWeightMatrix");
        });
      },
      linearOnly);
});

}  // namespace opforge::ops
