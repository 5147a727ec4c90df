#include "opforge/tensor.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace opforge {

const char* statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kIo:
      return "i/o error";
    case StatusCode::kCorrupt:
      return "corrupt data";
    case StatusCode::kVersion:
      return "version mismatch";
    case StatusCode::kOutOfRange:
      return "out of range";
    case StatusCode::kRuntime:
      return "runtime error";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

size_t dtypeSize(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUInt32:
      return 4;
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kBool:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      return 1;
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kFloat64:
      return 8;
    case DataType::kUndefined:
      return 0;
  }
  return 0;
}

namespace {
struct Name {
  DataType t;
  const char* name;
};
constexpr Name kNames[] = {
    {DataType::kFloat32, "FP32"},       {DataType::kFloat16, "FP16"},
    {DataType::kBFloat16, "BF16"},      {DataType::kFloat64, "FP64"},
    {DataType::kInt8, "INT8"},          {DataType::kUInt8, "UINT8"},
    {DataType::kInt16, "INT16"},        {DataType::kUInt16, "UINT16"},
    {DataType::kInt32, "INT32"},        {DataType::kUInt32, "UINT32"},
    {DataType::kInt64, "INT64"},        {DataType::kUInt64, "UINT64"},
    {DataType::kBool, "BOOL"},          {DataType::kFloat8E4M3, "FP8E4M3"},
    {DataType::kFloat8E5M2, "FP8E5M2"},
};
std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}
}  // namespace

std::string dtypeName(DataType t) {
  for (const auto& n : kNames)
    if (n.t == t) return n.name;
  return "UNDEFINED(" + std::to_string(static_cast<int>(t)) + ")";
}

std::optional<DataType> parseDataType(std::string_view name) {
  std::string u = upper(name);
  for (const auto& n : kNames)
    if (u == n.name) return n.t;
  if (u == "FLOAT" || u == "FLOAT32") return DataType::kFloat32;
  if (u == "HALF" || u == "FLOAT16") return DataType::kFloat16;
  if (u == "BFLOAT16") return DataType::kBFloat16;
  if (u == "DOUBLE" || u == "FLOAT64") return DataType::kFloat64;
  if (u == "INT") return DataType::kInt32;
  if (u == "FP8" || u == "FLOAT8E4M3FN") return DataType::kFloat8E4M3;
  if (u == "FLOAT8E5M2") return DataType::kFloat8E5M2;
  return std::nullopt;
}

bool isKnownDataType(int32_t n) {
  return n != 0 && dtypeSize(static_cast<DataType>(n)) != 0;
}

bool isFloatType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kFloat64;
}

std::string formatName(Format f) {
  return f == Format::kHWC ? "HWC" : "LINEAR";
}

std::optional<Format> parseFormat(std::string_view name) {
  std::string u = upper(name);
  if (u == "LINEAR") return Format::kLinear;
  if (u == "HWC" || u == "CHANNELS_LAST") return Format::kHWC;
  return std::nullopt;
}

std::string dimsToString(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(dims[i]);
  }
  return s;
}

Result<std::vector<int64_t>> parseDims(std::string_view text) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t x = text.find_first_of("x*", pos);
    std::string_view tok = text.substr(pos, x == std::string_view::npos ? text.npos : x - pos);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || p != tok.data() + tok.size() || tok.empty())
      return Status::invalid("bad dimension '" + std::string(tok) + "' in shape '" +
                             std::string(text) + "' (write shapes as 1x3x224x224)");
    dims.push_back(v);
    if (x == std::string_view::npos) break;
    pos = x + 1;
  }
  return dims;
}

std::string describe(const TensorDesc& d) {
  std::string s = dtypeName(d.dtype) + "[" + dimsToString(d.dims) + "]";
  if (d.format != Format::kLinear) s += ":" + formatName(d.format);
  return s;
}

namespace {
struct Fp8Format {
  int mbits, bias;
  bool fn;     // finite only: the all-ones exponent holds values, all ones is NaN (E4M3FN)
  double max;  // largest finite value
};
Fp8Format fp8Format(DataType t) {
  return t == DataType::kFloat8E4M3 ? Fp8Format{3, 7, true, 448.0}
                                    : Fp8Format{2, 15, false, 57344.0};
}
}  // namespace

uint8_t fp8FromDouble(double v, DataType t, bool saturate) {
  const Fp8Format f = fp8Format(t);
  const int ebits = 7 - f.mbits;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const uint8_t nan = f.fn ? 0x7f : 0x7e, inf = static_cast<uint8_t>(((1 << ebits) - 1) << f.mbits);
  if (std::isnan(v)) return static_cast<uint8_t>(sign | nan);
  const double a = std::fabs(v);
  const int emin = 1 - f.bias;  // exponent of the smallest normal value
  int e = emin;
  if (a >= std::ldexp(1.0, emin)) std::frexp(a, &e), e -= 1;
  // Rounded to a multiple of the quantum of a's binade (the subnormal one below emin); ties to
  // even (nearbyint in the default rounding mode). An infinite a stays infinite.
  const double q = std::ldexp(1.0, std::max(e, emin) - f.mbits);
  const double r = std::isinf(a) ? a : std::nearbyint(a / q) * q;
  if (r > f.max) {
    if (saturate) return fp8FromDouble(std::copysign(f.max, v), t, true);
    return static_cast<uint8_t>(sign | (f.fn ? nan : inf));
  }
  if (r == 0) return sign;
  int er = 0;
  std::frexp(r, &er);
  er -= 1;
  if (er < emin)  // subnormal: exponent field 0
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(r / std::ldexp(1.0, emin - f.mbits)));
  const int mant = static_cast<int>(std::ldexp(r, -er) * (1 << f.mbits)) - (1 << f.mbits);
  return static_cast<uint8_t>(sign | ((er + f.bias) << f.mbits) | mant);
}

double fp8ToDouble(uint8_t b, DataType t) {
  const Fp8Format f = fp8Format(t);
  const int ebits = 7 - f.mbits, emask = (1 << ebits) - 1, mmask = (1 << f.mbits) - 1;
  const int ef = (b >> f.mbits) & emask, m = b & mmask;
  const double s = (b & 0x80) ? -1.0 : 1.0;
  if (f.fn && ef == emask && m == mmask) return std::nan("");
  if (!f.fn && ef == emask) return m ? std::nan("") : s * HUGE_VAL;
  if (ef == 0) return s * std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
  return s * std::ldexp(1.0 + static_cast<double>(m) / (1 << f.mbits), ef - f.bias);
}

double loadAsDouble(const void* data, DataType t, int64_t i) {
  switch (t) {
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      return fp8ToDouble(static_cast<const uint8_t*>(data)[i], t);
    case DataType::kFloat32:
      return static_cast<const float*>(data)[i];
    case DataType::kFloat64:
      return static_cast<const double*>(data)[i];
    case DataType::kFloat16:
      return halfToFloat(static_cast<const uint16_t*>(data)[i]);
    case DataType::kBFloat16:
      return bf16ToFloat(static_cast<const uint16_t*>(data)[i]);
    case DataType::kInt8:
      return static_cast<const int8_t*>(data)[i];
    case DataType::kUInt8:
      return static_cast<const uint8_t*>(data)[i];
    case DataType::kInt16:
      return static_cast<const int16_t*>(data)[i];
    case DataType::kUInt16:
      return static_cast<const uint16_t*>(data)[i];
    case DataType::kInt32:
      return static_cast<const int32_t*>(data)[i];
    case DataType::kUInt32:
      return static_cast<const uint32_t*>(data)[i];
    case DataType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DataType::kUInt64:
      return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    case DataType::kBool:
      return static_cast<const uint8_t*>(data)[i] ? 1.0 : 0.0;
    case DataType::kUndefined:
      break;
  }
  return 0.0;
}

namespace {
template <typename I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}
}  // namespace

void storeFromDouble(void* data, DataType t, int64_t i, double v) {
  switch (t) {
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      static_cast<uint8_t*>(data)[i] = fp8FromDouble(v, t);
      return;
    case DataType::kFloat32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      return;
    case DataType::kFloat64:
      static_cast<double*>(data)[i] = v;
      return;
    case DataType::kFloat16:
      static_cast<uint16_t*>(data)[i] = floatToHalf(static_cast<float>(v));
      return;
    case DataType::kBFloat16:
      static_cast<uint16_t*>(data)[i] = floatToBf16(static_cast<float>(v));
      return;
    case DataType::kInt8:
      static_cast<int8_t*>(data)[i] = saturate<int8_t>(v);
      return;
    case DataType::kUInt8:
      static_cast<uint8_t*>(data)[i] = saturate<uint8_t>(v);
      return;
    case DataType::kInt16:
      static_cast<int16_t*>(data)[i] = saturate<int16_t>(v);
      return;
    case DataType::kUInt16:
      static_cast<uint16_t*>(data)[i] = saturate<uint16_t>(v);
      return;
    case DataType::kInt32:
      static_cast<int32_t*>(data)[i] = saturate<int32_t>(v);
      return;
    case DataType::kUInt32:
      static_cast<uint32_t*>(data)[i] = saturate<uint32_t>(v);
      return;
    case DataType::kInt64:
      static_cast<int64_t*>(data)[i] = saturate<int64_t>(v);
      return;
    case DataType::kUInt64:
      static_cast<uint64_t*>(data)[i] = saturate<uint64_t>(v);
      return;
    case DataType::kBool:
      static_cast<uint8_t*>(data)[i] = v != 0.0;
      return;
    case DataType::kUndefined:
      return;
  }
}

int64_t physicalOffset(const TensorDesc& desc, const int64_t* idx) {
  const int r = desc.rank();
  int64_t off = 0;
  if (desc.format == Format::kHWC && r >= 3) {
    // memory order: d0, d2, ..., d(r-1), d1
    off = idx[0];
    for (int a = 2; a < r; ++a) off = off * desc.dims[a] + idx[a];
    off = off * desc.dims[1] + idx[1];
    return off;
  }
  for (int a = 0; a < r; ++a) off = off * desc.dims[a] + idx[a];
  return off;
}

}  // namespace opforge
