#include "cast_cuda.h"

#include "elementwise.cuh"

namespace opforge::ops {
namespace {

template <typename I>
__device__ __forceinline__ I saturateDev(double v) {
  if (v != v) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <typename SO>
__device__ __forceinline__ SO fromDouble(double v) {
  if constexpr (std::is_same_v<SO, float>)
    return static_cast<float>(v);
  else if constexpr (std::is_same_v<SO, double>)
    return v;
  else if constexpr (std::is_same_v<SO, __half>)
    return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<SO, __nv_bfloat16>)
    return __float2bfloat16_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<SO, Bool8>)
    return Bool8{static_cast<uint8_t>(v != 0.0 ? 1 : 0)};
  else
    return saturateDev<SO>(v);
}

template <typename SI, typename SO>
struct CastOp {
  __device__ __forceinline__ SO operator()(SI x) const {
    using CI = typename DNum<SI>::C;
    constexpr bool kIntIn = std::is_integral_v<CI>;   // bool counts as integral, as on the CPU
    constexpr bool kIntOut = std::is_integral_v<SO>;  // Bool8 is not
    if constexpr (kIntIn && kIntOut) {
      return static_cast<SO>(DNum<SI>::load(x));
    } else if constexpr (std::is_same_v<SI, SO>) {
      return x;
    } else if constexpr (std::is_same_v<SI, float> && std::is_same_v<SO, __half>) {
      return __float2half_rn(x);
    } else if constexpr (std::is_same_v<SI, float> && std::is_same_v<SO, __nv_bfloat16>) {
      return __float2bfloat16_rn(x);
    } else {
      return fromDouble<SO>(static_cast<double>(DNum<SI>::load(x)));
    }
  }
};

}  // namespace

bool castApplies(const AttrMap& a, std::span<const TensorDesc> in,
                 std::span<const TensorDesc> out) {
  return linearOnly(a, in, out) && !inTypeSet(in[0].dtype, kFp8) && !inTypeSet(out[0].dtype, kFp8);
}

Status castDevice(const Tensor& x, const Tensor& y, void* stream, const char* op) {
  if (x.numel() != y.numel()) return Status::internal(std::string(op) + ": element counts differ");
  auto st = static_cast<cudaStream_t>(stream);
  if (x.desc.dtype == y.desc.dtype) return copyDevice(y.data, x.data, y.bytes(), st, op);
  return visitDevice<kAll>(x.desc.dtype, op, [&](auto ti) -> Status {
    using SI = typename decltype(ti)::type;
    return visitDevice<kAll>(y.desc.dtype, op, [&](auto to) -> Status {
      using SO = typename decltype(to)::type;
      return launchMap1<SI, SO>(x.data, y.data, y.numel(), CastOp<SI, SO>{}, st, op);
    });
  });
}

}  // namespace opforge::ops
