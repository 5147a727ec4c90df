// opforge/tensor.h — data types, memory formats, tensor descriptions and tensor views.
//
// DataType numbers are ONNX's TensorProto.DataType numbers, so a value read from a model or a plan
// is a DataType without translation. The short names ("FP32", "FP16", ...) are the names of
// TensorRT's plugin combination grammar and are what error messages print.
//
// Format describes the memory layout of a tensor whose logical dimensions stay in ONNX order:
//   LINEAR  row-major over the logical dimensions;
//   HWC     "channels last": for rank >= 3 the axis 1 (C) is stored innermost, i.e. the memory
//           order is (d0, d2, d3, ..., d(r-1), d1). For rank < 3 HWC equals LINEAR.
//
// Tensor is a non-owning view (description + pointer + device). Whoever hands out a Tensor says
// how long its memory lives; kernels never keep a Tensor beyond their call.
//
// Usage:
//   opforge::TensorDesc d{opforge::DataType::kFloat32, {2, 3}};
//   std::vector<float> buf(d.numel());
//   opforge::Tensor t{d, buf.data()};
//   float* p = t.as<float>();
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opforge/status.h"

namespace opforge {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  kFloat8E4M3 = 17,  // ONNX FLOAT8E4M3FN: 4-bit exponent (bias 7), 3-bit mantissa, NaN, no inf
  kFloat8E5M2 = 19,  // ONNX FLOAT8E5M2: 5-bit exponent (bias 15), 2-bit mantissa, inf and NaN
};

// Size of one element in bytes; 0 for kUndefined or a number opforge does not know.
size_t dtypeSize(DataType t);
// "FP32", "FP16", "BF16", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64",
// "UINT64", "BOOL", "FP64", "FP8E4M3", "FP8E5M2"; "UNDEFINED(<n>)" otherwise.
std::string dtypeName(DataType t);
// Parses the names above (and the aliases "FLOAT", "HALF", "BFLOAT16", "INT", "FLOAT64", "DOUBLE",
// "FP8" (E4M3, TensorRT's name), "FLOAT8E4M3FN", "FLOAT8E5M2").
std::optional<DataType> parseDataType(std::string_view name);
// True for a DataType opforge can store (all enumerators except kUndefined).
bool isKnownDataType(int32_t onnx_number);
bool isFloatType(DataType t);

enum class Format : int32_t { kLinear = 0, kHWC = 1 };
std::string formatName(Format f);  // "LINEAR", "HWC"
std::optional<Format> parseFormat(std::string_view name);
// True when a tensor of `dims` stores the same bytes in formats a and b: the same format, rank < 3,
// an axis 1 of size 1, or every axis after axis 1 of size 1 (an [N, C, 1, 1] squeeze-excitation
// scale is one [N, C] matrix in either format).
inline bool formatsShareBytes(Format a, Format b, const std::vector<int64_t>& dims) {
  if (a == b || dims.size() < 3 || dims[1] == 1) return true;
  for (size_t i = 2; i < dims.size(); ++i)
    if (dims[i] != 1) return false;
  return true;
}

// Concrete description: every dimension is known.
struct TensorDesc {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  Format format = Format::kLinear;

  int rank() const { return static_cast<int>(dims.size()); }
  // The element count. A product past INT64_MAX saturates to INT64_MAX (never wraps), so a
  // description too large for any memory is seen as such by the size checks that follow (opforge's
  // documented maximum is 2^40 elements per tensor; importer, builder and plan loader refuse more).
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
    return n;
  }
  // The byte count; saturates to SIZE_MAX like numel(). A negative count (a dimension below 0,
  // never a valid description) gives SIZE_MAX too, so no allocation takes it for an empty one.
  size_t bytes() const {
    const int64_t n = numel();
    if (n < 0) return SIZE_MAX;
    size_t b = 0;
    if (__builtin_mul_overflow(static_cast<size_t>(n), dtypeSize(dtype), &b)) return SIZE_MAX;
    return b;
  }
  bool operator==(const TensorDesc&) const = default;
};

// "FP32[2x3x4]" (":HWC" appended for channels-last).
std::string describe(const TensorDesc& d);
// "2x3x4" — the trtexec spelling of a shape; "scalar" for rank 0.
std::string dimsToString(const std::vector<int64_t>& dims);
// Parses "2x3x4"; "scalar" or "" gives rank 0.
Result<std::vector<int64_t>> parseDims(std::string_view text);

enum class Device : int32_t { kCpu = 0, kCuda = 1 };

// A non-owning view of tensor memory.
struct Tensor {
  TensorDesc desc;
  void* data = nullptr;
  Device device = Device::kCpu;

  int64_t numel() const { return desc.numel(); }
  size_t bytes() const { return desc.bytes(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// IEEE half and bfloat16 storage types for host code. Conversions round to nearest even.
struct half {
  uint16_t bits = 0;
};
struct bfloat16 {
  uint16_t bits = 0;
};

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)
    return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14..24
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = ((absx >> 13) - (112u << 10));
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

// Reads element i of a tensor of any numeric dtype as double / writes it from double
// (used by references, tests and the reformat op; not for hot paths). FP8 stores round to nearest
// even and saturate (ONNX Cast's default): see fp8FromDouble.
double loadAsDouble(const void* data, DataType t, int64_t i);
void storeFromDouble(void* data, DataType t, int64_t i, double v);

// FP8 (t: kFloat8E4M3 or kFloat8E5M2) bits of v, rounded to nearest even. A magnitude that rounds
// past the largest finite value (448, 57344) or is infinite becomes that value with `saturate`,
// else NaN (E4M3) or infinity (E5M2), as ONNX Cast defines; NaN stays NaN.
uint8_t fp8FromDouble(double v, DataType t, bool saturate = true);
// The value of FP8 bits `b` of type t.
double fp8ToDouble(uint8_t b, DataType t);

// Physical offset of logical index `idx` (row-major logical coordinates) in a tensor of `desc`.
int64_t physicalOffset(const TensorDesc& desc, const int64_t* idx);

}  // namespace opforge
