#include "onnx_tensor.h"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "../common/checked.h"
#include "onnx/onnx_pb.h"

namespace opforge::onnx_io {

Result<std::string> safeExternalPath(const std::string& base_dir, const std::string& location,
                                     const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Status::invalid(what + ": external data location '" + location + "' " + why +
                           " (ONNX requires a relative path inside the model's folder)");
  };
  if (base_dir.empty()) return bad("cannot be used for a model loaded from memory");
  if (location.empty()) return bad("is empty");
  if (location[0] == '/' || location[0] == '\\') return bad("is absolute");
  if (location.find(':') != std::string::npos) return bad("contains ':'");
  std::stringstream ss(location);
  std::string part;
  std::string path = base_dir;
  while (std::getline(ss, part, '/')) {
    if (part == "..") return bad("contains '..'");
    if (part.empty() || part == ".") continue;
    path += "/" + part;
    struct stat sb;
    if (::lstat(path.c_str(), &sb) != 0) return bad("does not exist");
    if (S_ISLNK(sb.st_mode)) return bad("goes through a symbolic link");
  }
  char rb[PATH_MAX], rp[PATH_MAX];
  if (!::realpath(base_dir.c_str(), rb) || !::realpath(path.c_str(), rp))
    return bad("cannot be resolved");
  std::string root(rb), full(rp);
  if (full.compare(0, root.size(), root) != 0 ||
      (full.size() > root.size() && full[root.size()] != '/'))
    return bad("points outside the model's folder");
  struct stat sb;
  if (::stat(full.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) return bad("is not a regular file");
  return full;
}

namespace {
// A non-negative decimal integer, digits only (no sign, no "0x", no spaces, no trailing text).
std::optional<int64_t> parseDecimal(const std::string& s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
      return std::nullopt;
  }
  return v;
}

template <typename Src>
void copyTyped(const Src& src, TensorValue& t) {
  const int64_t n = t.desc.numel();
  for (int64_t i = 0; i < n; ++i)
    storeFromDouble(t.data.data(), t.desc.dtype, i,
                    static_cast<double>(src.Get(static_cast<int>(i))));
}
}  // namespace

Result<TensorValue> tensorFromProto(const onnx::TensorProto& p, const std::string& base_dir,
                                    const std::string& what) {
  if (!isKnownDataType(p.data_type()))
    return Status::unsupported(what + ": ONNX data type " + std::to_string(p.data_type()) +
                               " is not supported (opforge handles FP32/FP16/BF16/FP64, "
                               "INT8/16/32/64, UINT8/16/32/64, BOOL, FP8E4M3FN and FP8E5M2)");
  TensorValue t;
  t.desc.dtype = static_cast<DataType>(p.data_type());
  for (int64_t d : p.dims()) {
    const std::string axis = "dimension " + std::to_string(t.desc.dims.size());
    if (d < 0)
      return Status::invalid(what + ": " + axis + " is negative (" + std::to_string(d) + ")");
    if (d > kMaxDim)
      return Status::outOfRange(what + ": " + axis + " is " + std::to_string(d) +
                                "; opforge's maximum for a dimension is 2^31 - 1");
    t.desc.dims.push_back(d);
  }
  // The element count is checked (it can not overflow: rank is bounded by the protobuf, but the
  // product of many 2^31 dims can), then compared with the data held, all before allocating.
  int64_t numel = 1;
  for (int64_t d : t.desc.dims)
    if (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxElements)
      return Status::outOfRange(what + ": shape " + dimsToString(t.desc.dims) +
                                " has more than 2^40 elements, opforge's maximum");
  const size_t bytes = static_cast<size_t>(numel) * dtypeSize(t.desc.dtype);
  if (p.has_segment()) return Status::unsupported(what + ": segmented tensors are not supported");
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : p.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" || kv.key() == "length") {
        // ONNX writes these as decimal strings; anything else ("garbage", "0x40", "-1") would
        // silently read other bytes.
        auto v = parseDecimal(kv.value());
        if (!v)
          return Status::invalid(what + ": external data '" + kv.key() + "' is '" + kv.value() +
                                 "', not a non-negative decimal integer");
        (kv.key() == "offset" ? offset : length) = *v;
      }
    }
    OPFORGE_ASSIGN_OR_RETURN(std::string path, safeExternalPath(base_dir, location, what));
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return Status::io(what + ": cannot open external data file '" + path + "'");
    const int64_t fsize = static_cast<int64_t>(f.tellg());
    if (offset > fsize)
      return Status::corrupt(what + ": external data offset " + std::to_string(offset) +
                             " lies past the end of '" + path + "' (" + std::to_string(fsize) +
                             " bytes)");
    if (length < 0) length = fsize - offset;
    if (length > fsize - offset)
      return Status::corrupt(what + ": external data [" + std::to_string(offset) + ", +" +
                             std::to_string(length) + ") lies outside '" + path + "' (" +
                             std::to_string(fsize) + " bytes)");
    if (static_cast<size_t>(length) != bytes)
      return Status::corrupt(what + ": external data holds " + std::to_string(length) + " bytes; " +
                             describe(t.desc) + " needs " + std::to_string(bytes));
    t.data.resize(bytes);
    f.seekg(offset);
    if (!f.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(bytes)))
      return Status::io(what + ": reading external data from '" + path + "' failed");
    return t;
  }
  if (p.has_raw_data()) {
    if (p.raw_data().size() != bytes)
      return Status::corrupt(what + ": raw_data holds " + std::to_string(p.raw_data().size()) +
                             " bytes; " + describe(t.desc) + " needs " + std::to_string(bytes));
    t.data.assign(p.raw_data().begin(), p.raw_data().end());
    return t;
  }
  auto countMismatch = [&](int64_t have) {
    return Status::corrupt(what + ": holds " + std::to_string(have) + " values; " +
                           describe(t.desc) + " needs " + std::to_string(numel));
  };
  // The typed field's count is compared with the shape before the buffer is allocated.
  int64_t have = 0;
  switch (t.desc.dtype) {
    case DataType::kFloat32:
      have = p.float_data_size();
      break;
    case DataType::kFloat64:
      have = p.double_data_size();
      break;
    case DataType::kInt64:
      have = p.int64_data_size();
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      have = p.uint64_data_size();
      break;
    default:
      have = p.int32_data_size();
      break;
  }
  if (have != numel) return countMismatch(have);
  t.data.assign(bytes, 0);
  switch (t.desc.dtype) {
    case DataType::kFloat32:
      if (p.float_data_size() != numel) return countMismatch(p.float_data_size());
      copyTyped(p.float_data(), t);
      break;
    case DataType::kFloat64:
      if (p.double_data_size() != numel) return countMismatch(p.double_data_size());
      copyTyped(p.double_data(), t);
      break;
    case DataType::kInt64:
      if (p.int64_data_size() != numel) return countMismatch(p.int64_data_size());
      for (int64_t i = 0; i < numel; ++i)
        reinterpret_cast<int64_t*>(t.data.data())[i] = p.int64_data(static_cast<int>(i));
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      if (p.uint64_data_size() != numel) return countMismatch(p.uint64_data_size());
      for (int64_t i = 0; i < numel; ++i) {
        uint64_t v = p.uint64_data(static_cast<int>(i));
        if (t.desc.dtype == DataType::kUInt64)
          reinterpret_cast<uint64_t*>(t.data.data())[i] = v;
        else
          reinterpret_cast<uint32_t*>(t.data.data())[i] = static_cast<uint32_t>(v);
      }
      break;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      // int32_data holds the 16-bit patterns
      if (p.int32_data_size() != numel) return countMismatch(p.int32_data_size());
      for (int64_t i = 0; i < numel; ++i)
        reinterpret_cast<uint16_t*>(t.data.data())[i] =
            static_cast<uint16_t>(p.int32_data(static_cast<int>(i)));
      break;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      // int32_data holds the 8-bit patterns
      for (int64_t i = 0; i < numel; ++i)
        t.data[static_cast<size_t>(i)] = static_cast<uint8_t>(p.int32_data(static_cast<int>(i)));
      break;
    default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL in int32_data
      if (p.int32_data_size() != numel) return countMismatch(p.int32_data_size());
      copyTyped(p.int32_data(), t);
      break;
  }
  return t;
}

Result<TensorValue> readTensorFile(const std::string& path, std::string* name) {
  OPFORGE_RETURN_IF_ERROR(checked::regularFile(path, "tensor file"));
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::notFound("cannot open tensor file '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes))
    return Status::corrupt("'" + path + "' is not a serialized ONNX TensorProto");
  if (name) *name = p.name();
  std::string dir =
      path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  return tensorFromProto(p, dir.empty() ? "." : dir, "tensor file '" + path + "'");
}

}  // namespace opforge::onnx_io
