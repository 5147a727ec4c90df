#include "npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>

#include "../../src/common/checked.h"
#include "opforge/io.h"

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

// The header dictionary, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// A bounded, hand-written parser of exactly the Python literals numpy writes there: strings in
// single or double quotes, True/False, and a tuple of non-negative integers.
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(const std::string& s) : s_(s) {}

  Result<Header> parse() {
    Header h;
    skipSpace();
    if (!eat('{')) return bad("the header is not a Python dict (it must start with '{')");
    for (;;) {
      skipSpace();
      if (eat('}')) break;
      OPFORGE_ASSIGN_OR_RETURN(std::string key, str("a key"));
      skipSpace();
      if (!eat(':')) return bad("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (h.descr) return bad("key 'descr' appears twice");
        if (peek() == '[') return bad("structured dtypes (a list as 'descr') are not supported");
        OPFORGE_ASSIGN_OR_RETURN(std::string d, str("the value of 'descr'"));
        h.descr = d;
      } else if (key == "fortran_order") {
        if (h.fortran_order) return bad("key 'fortran_order' appears twice");
        if (word("True"))
          h.fortran_order = true;
        else if (word("False"))
          h.fortran_order = false;
        else
          return bad("'fortran_order' must be True or False");
      } else if (key == "shape") {
        if (h.shape) return bad("key 'shape' appears twice");
        OPFORGE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, tuple());
        h.shape = std::move(dims);
      } else {
        return bad("unexpected key '" + key +
                   "' (numpy writes exactly descr, fortran_order, shape)");
      }
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return bad("expected ',' or '}' after the value of '" + key + "'");
    }
    skipSpace();  // numpy pads with spaces and ends with '\n'
    if (i_ != s_.size()) return bad("unexpected text after the header dict");
    return h;
  }

 private:
  static constexpr size_t kMaxRank = 64;

  Status bad(const std::string& why) const {
    return Status::invalid(why + " (at header byte " + std::to_string(i_) + ")");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void skipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  Result<std::string> str(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') return bad("expected " + what + " as a quoted string");
    ++i_;
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\') return bad("escapes in strings are not supported");
      ++i_;
    }
    if (i_ >= s_.size()) return bad("unterminated string");
    std::string out = s_.substr(start, i_ - start);
    ++i_;
    return out;
  }
  // "(2, 3)", "(3,)", "()"; a bare "(3)" is the integer 3 in Python, not a tuple.
  Result<std::vector<int64_t>> tuple() {
    if (!eat('(')) return bad("'shape' must be a tuple such as (2, 3)");
    std::vector<int64_t> dims;
    bool comma_after_last = false;
    for (;;) {
      skipSpace();
      if (eat(')')) break;
      if (!dims.empty() && !comma_after_last) return bad("expected ',' between dimensions");
      if (peek() == '-')
        return bad("dimension " + std::to_string(dims.size()) + " of 'shape' is negative");
      if (peek() < '0' || peek() > '9')
        return bad("dimension " + std::to_string(dims.size()) +
                   " of 'shape' is not a non-negative integer");
      int64_t v = 0;
      const size_t start = i_;
      while (peek() >= '0' && peek() <= '9') {
        auto m = checked::mul(v, 10);
        auto a = m ? checked::add(*m, peek() - '0') : std::nullopt;
        if (!a) {
          while (peek() >= '0' && peek() <= '9') ++i_;
          return bad("dimension " + std::to_string(dims.size()) + " of 'shape' (" +
                     s_.substr(start, i_ - start) + ") does not fit in 64 bits");
        }
        v = *a;
        ++i_;
      }
      eat('L');  // Python 2 longs, as old numpy wrote them
      if (dims.size() == kMaxRank)
        return bad("'shape' has more than " + std::to_string(kMaxRank) + " dimensions");
      dims.push_back(v);
      skipSpace();
      comma_after_last = eat(',');
    }
    if (dims.size() == 1 && !comma_after_last)
      return bad("'shape' (" + std::to_string(dims[0]) +
                 ") is an integer, not a tuple; a 1-D shape is written (" +
                 std::to_string(dims[0]) + ",)");
    return dims;
  }

  const std::string& s_;
  size_t i_ = 0;
};
}  // namespace

std::string descr(DataType t) {
  for (const auto& d : kDescr)
    if (d.type == t) return d.text;
  return "?";
}

namespace {
// The .npy decoder over any byte source: `read_at(offset, dst, n)` copies n bytes at offset (the
// caller has checked offset + n <= file_size). `path` names the source in errors.
template <typename ReadAt>
Result<TensorValue> decodeFrom(const std::string& path, uint64_t file_size, ReadAt read_at) {
  auto bad = [&](const std::string& why) {
    return Status::invalid(path + ": not a usable .npy file: " + why);
  };
  char pre[12] = {};
  const size_t pre_n = static_cast<size_t>(std::min<uint64_t>(file_size, 12));
  if (!read_at(0, pre, pre_n)) return Status::io(path + ": read failed");
  if (pre_n < 10 || std::memcmp(pre, "\x93NUMPY", 6) != 0) return bad("bad magic");
  const int major = static_cast<unsigned char>(pre[6]);
  uint64_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<unsigned char>(pre[8]) | (static_cast<unsigned char>(pre[9]) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (pre_n < 12) return bad("truncated header");
    uint32_t l;
    std::memcpy(&l, pre + 8, 4);
    hlen = l;
    hstart = 12;
  } else {
    return bad("format version " + std::to_string(major));
  }
  // numpy itself refuses headers over 10000 bytes by default (np.load's max_header_size).
  constexpr uint64_t kMaxHeader = 65536;
  if (hlen > kMaxHeader)
    return bad("the header is " + std::to_string(hlen) + " bytes; at most " +
               std::to_string(kMaxHeader) + " are read");
  if (hstart + hlen > file_size) return bad("truncated header");
  std::string header(hlen, '\0');
  if (hlen && !read_at(hstart, header.data(), hlen))
    return Status::io(path + ": reading the .npy header failed");
  auto parsed = HeaderParser(header).parse();
  if (!parsed) return bad(parsed.status().message());
  const Header& h = *parsed;
  if (!h.descr) return bad("no 'descr' in header");
  if (!h.fortran_order) return bad("no 'fortran_order' in header");
  if (!h.shape) return bad("no 'shape' in header");
  std::string d = *h.descr;
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
  if (*h.fortran_order)
    return bad("Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  TensorValue t;
  t.desc.dtype = *dt;
  t.desc.dims = *h.shape;
  auto need = checked::bytes(t.desc);
  if (!need)
    return bad("shape " + dimsToString(t.desc.dims) + " of " + d +
               " holds more bytes than fit in 64 bits");
  const uint64_t have = file_size - hstart - hlen;
  if (have != static_cast<uint64_t>(*need))
    return bad("payload is " + std::to_string(have) + " bytes; " + describe(t.desc) + " needs " +
               std::to_string(*need));
  t.data.resize(static_cast<size_t>(*need));
  if (*need && !read_at(hstart + hlen, t.data.data(), static_cast<size_t>(*need)))
    return Status::io(path + ": reading the .npy payload failed");
  return t;
}
}  // namespace

Result<TensorValue> read(const std::string& path) {
  // Refuse directories and FIFOs before opening: open() of a FIFO blocks until a writer comes.
  OPFORGE_RETURN_IF_ERROR(checked::regularFile(path, ".npy file"));
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Status::notFound(path + ": cannot open .npy file");
  const auto end = f.tellg();
  if (end < 0) return Status::io(path + ": cannot read .npy file");
  return decodeFrom(path, static_cast<uint64_t>(end), [&](uint64_t off, void* dst, size_t n) {
    f.seekg(static_cast<std::streamoff>(off));
    return static_cast<bool>(f.read(static_cast<char*>(dst), static_cast<std::streamsize>(n)));
  });
}

Result<TensorValue> decode(const uint8_t* data, size_t size, const std::string& name) {
  return decodeFrom(name, size, [&](uint64_t off, void* dst, size_t n) {
    if (n) std::memcpy(dst, data + off, n);
    return true;
  });
}

std::vector<uint8_t> encode(const TensorDesc& desc, const void* data) {
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
  return out;
}

Status write(const std::string& path, const TensorDesc& desc, const void* data) {
  if (descr(desc.dtype) == "?")  // FP8: numpy has no such type (ml_dtypes' are not in .npy)
    return Status::unsupported("'" + path + "': a " + dtypeName(desc.dtype) +
                               " tensor has no .npy type; Cast it to FLOAT or FLOAT16 first");
  return writeFileAtomic(path, encode(desc, data));
}

}  // namespace opforge::npy
