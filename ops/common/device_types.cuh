// device_types.cuh — the device side of data types, shared by every CUDA tactic (ONNX, core and
// contrib ops): one numeric trait per device storage type and one dtype switch for kernels. It
// needs only opforge/op.h and dtype_dispatch.h's TypeSet (no device-error or ONNX helpers), so a
// plugin op includes it as it is.
//
// Storage types on the device: float, double, __half, __nv_bfloat16, (u)int8..64 and Bool8 (one
// byte, 0 or 1). DNum<S>::C is the compute type — float for FP16/BF16 (as the CPU references,
// which load half/bfloat16 into float), the type itself otherwise, bool for Bool8. DNum<S>::Bits
// is how an element travels in registers and 16-byte packs (unsigned short for FP16/BF16, whose
// CUDA types are not trivially constructible; S itself otherwise); loadBits/storeBits convert it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "dtype_dispatch.h"
#include "opforge/op.h"

namespace opforge::ops {

struct Bool8 {
  uint8_t v;
};

template <typename S>
struct DNum {
  using C = S;
  using Bits = S;
  __device__ __forceinline__ static C load(S s) { return s; }
  __device__ __forceinline__ static S store(C c) { return c; }
  __device__ __forceinline__ static C loadBits(Bits b) { return b; }
  __device__ __forceinline__ static Bits storeBits(C c) { return c; }
};
template <>
struct DNum<__half> {
  using C = float;
  using Bits = unsigned short;
  __device__ __forceinline__ static float load(__half s) { return __half2float(s); }
  __device__ __forceinline__ static __half store(float c) { return __float2half_rn(c); }
  __device__ __forceinline__ static float loadBits(unsigned short b) {
    return __half2float(__ushort_as_half(b));
  }
  __device__ __forceinline__ static unsigned short storeBits(float c) {
    return __half_as_ushort(__float2half_rn(c));
  }
};
template <>
struct DNum<__nv_bfloat16> {
  using C = float;
  using Bits = unsigned short;
  __device__ __forceinline__ static float load(__nv_bfloat16 s) { return __bfloat162float(s); }
  __device__ __forceinline__ static __nv_bfloat16 store(float c) { return __float2bfloat16_rn(c); }
  __device__ __forceinline__ static float loadBits(unsigned short b) {
    return __bfloat162float(__ushort_as_bfloat16(b));
  }
  __device__ __forceinline__ static unsigned short storeBits(float c) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(c));
  }
};
template <>
struct DNum<Bool8> {
  using C = bool;
  using Bits = Bool8;
  __device__ __forceinline__ static bool load(Bool8 s) { return s.v != 0; }
  __device__ __forceinline__ static Bool8 store(bool c) {
    return Bool8{static_cast<uint8_t>(c ? 1 : 0)};
  }
  __device__ __forceinline__ static bool loadBits(Bool8 b) { return load(b); }
  __device__ __forceinline__ static Bool8 storeBits(bool c) { return store(c); }
};

template <typename S>
struct TypeTag {
  using type = S;
};

// Calls f(TypeTag<S>{}) for the device storage type of `t` when `t` is in `Set` (a TypeSet of
// dtype_dispatch.h: groups such as kFloats, or single types such as kF32 | kF16); only the types
// in Set are instantiated. `op` names the caller in the Unsupported status of any other type.
template <unsigned Set, typename F>
Status visitDevice(DataType t, const char* op, F&& f) {
  switch (t) {
    case DataType::kFloat32:
      if constexpr ((Set & kF32) != 0) return f(TypeTag<float>{});
      break;
    case DataType::kFloat16:
      if constexpr ((Set & kF16) != 0) return f(TypeTag<__half>{});
      break;
    case DataType::kBFloat16:
      if constexpr ((Set & kBF16) != 0) return f(TypeTag<__nv_bfloat16>{});
      break;
    case DataType::kFloat64:
      if constexpr ((Set & kF64) != 0) return f(TypeTag<double>{});
      break;
    case DataType::kInt8:
      if constexpr ((Set & kI8) != 0) return f(TypeTag<int8_t>{});
      break;
    case DataType::kInt16:
      if constexpr ((Set & kI16) != 0) return f(TypeTag<int16_t>{});
      break;
    case DataType::kInt32:
      if constexpr ((Set & kI32) != 0) return f(TypeTag<int32_t>{});
      break;
    case DataType::kInt64:
      if constexpr ((Set & kI64) != 0) return f(TypeTag<int64_t>{});
      break;
    case DataType::kUInt8:
      if constexpr ((Set & kU8) != 0) return f(TypeTag<uint8_t>{});
      break;
    case DataType::kUInt16:
      if constexpr ((Set & kU16) != 0) return f(TypeTag<uint16_t>{});
      break;
    case DataType::kUInt32:
      if constexpr ((Set & kU32) != 0) return f(TypeTag<uint32_t>{});
      break;
    case DataType::kUInt64:
      if constexpr ((Set & kU64) != 0) return f(TypeTag<uint64_t>{});
      break;
    case DataType::kBool:
      if constexpr ((Set & kBools) != 0) return f(TypeTag<Bool8>{});
      break;
    default:
      break;
  }
  return Status::unsupported(std::string(op) + " (CUDA) does not support " + dtypeName(t));
}

// f(TypeTag<S>{}) with an unsigned storage type of t's size (data movement: only bytes matter),
// for the byte sizes in the mask `Sizes` (1 | 2 | 4 | 8, all of them, by default).
constexpr unsigned kAllSizes = 1 | 2 | 4 | 8;
template <unsigned Sizes = kAllSizes, typename F>
Status visitDeviceBySize(DataType t, const char* op, F&& f) {
  switch (dtypeSize(t)) {
    case 1:
      if constexpr ((Sizes & 1) != 0) return f(TypeTag<uint8_t>{});
      break;
    case 2:
      if constexpr ((Sizes & 2) != 0) return f(TypeTag<uint16_t>{});
      break;
    case 4:
      if constexpr ((Sizes & 4) != 0) return f(TypeTag<uint32_t>{});
      break;
    case 8:
      if constexpr ((Sizes & 8) != 0) return f(TypeTag<uint64_t>{});
      break;
    default:
      break;
  }
  return Status::unsupported(std::string(op) + " (CUDA) does not support " + dtypeName(t));
}

}  // namespace opforge::ops
