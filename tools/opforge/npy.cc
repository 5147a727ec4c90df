#include "npy.h"

#include <cstring>
#include <fstream>
#include <regex>

#include "opforge/builder.h"

namespace opforge::npy {

namespace {
struct Descr {
  const char* text;
  DataType type;
};
constexpr Descr kDescr[] = {
    {"<f4", DataType::kFloat32},  {"<f8", DataType::kFloat64}, {"<f2", DataType::kFloat16},
    {"|i1", DataType::kInt8},     {"<i2", DataType::kInt16},   {"<i4", DataType::kInt32},
    {"<i8", DataType::kInt64},    {"|u1", DataType::kUInt8},   {"<u2", DataType::kUInt16},
    {"<u4", DataType::kUInt32},   {"<u8", DataType::kUInt64},  {"|b1", DataType::kBool},
    {"<V2", DataType::kBFloat16},
};
}  // namespace

std::string descr(DataType t) {
  for (const auto& d : kDescr)
    if (d.type == t) return d.text;
  return "?";
}

Result<TensorValue> read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::notFound(path + ": cannot open .npy file");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return Status::invalid(path + ": not a usable .npy file: " + why);
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return bad("bad magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    uint32_t l;
    std::memcpy(&l, bytes.data() + 8, 4);
    hlen = l;
    hstart = 12;
  } else {
    return bad("format version " + std::to_string(major));
  }
  if (hstart + hlen > bytes.size()) return bad("truncated header");
  const std::string header = bytes.substr(hstart, hlen);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")))
    return bad("no descr in header");
  std::string d = m[1];
  if (d == "<b1") d = "|b1";
  if (d == "<i1") d = "|i1";
  if (d == "<u1") d = "|u1";
  if (d == "|V2") d = "<V2";
  std::optional<DataType> dt;
  for (const auto& x : kDescr)
    if (d == x.text) dt = x.type;
  if (!dt)
    return bad("dtype '" + d +
               "' is not supported (big-endian, object, string and complex arrays are not)");
  if (!std::regex_search(header, m, std::regex("'fortran_order':\\s*(True|False)")))
    return bad("no fortran_order");
  if (m[1] == "True")
    return bad("Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    return bad("no shape in header");
  TensorValue t;
  t.desc.dtype = *dt;
  std::string shape = m[1];
  std::regex num("\\d+");
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), num);
       it != std::sregex_iterator(); ++it)
    t.desc.dims.push_back(std::stoll(it->str()));
  const size_t need = t.desc.bytes();
  const size_t have = bytes.size() - hstart - hlen;
  if (have != need)
    return bad("payload is " + std::to_string(have) + " bytes; " + describe(t.desc) + " needs " +
               std::to_string(need));
  t.data.assign(bytes.begin() + static_cast<long>(hstart + hlen), bytes.end());
  return t;
}

Status write(const std::string& path, const TensorDesc& desc, const void* data) {
  std::string shape = "(";
  for (size_t i = 0; i < desc.dims.size(); ++i)
    shape += std::to_string(desc.dims[i]) +
             (desc.dims.size() == 1 ? "," : (i + 1 < desc.dims.size() ? ", " : ""));
  shape += ")";
  std::string header =
      "{'descr': '" + descr(desc.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(10 + header.size() + desc.bytes());
  std::memcpy(out.data(), "\x93NUMPY\x01\x00", 8);
  out[8] = static_cast<uint8_t>(header.size() & 0xff);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + 10, header.data(), header.size());
  if (desc.bytes()) std::memcpy(out.data() + 10 + header.size(), data, desc.bytes());
  return writeFileAtomic(path, out);
}

}  // namespace opforge::npy
