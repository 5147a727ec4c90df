// The attributes of opforge::AotKernel: parsing, and the checks of README.md ("Attributes").
#include "aot_spec.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

namespace opforge::ops::aot {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits at `sep` outside parentheses.
std::vector<std::string_view> splitTop(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out;
  for (auto l : splitTop(s, '\n'))
    if (!l.empty()) out.push_back(l);
  return out;
}

bool parseInt(std::string_view s, int64_t& v) {
  if (s.empty() || s.size() > 18) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  return true;
}

// "in3" / "out0" -> 3 / 0.
bool indexAfter(std::string_view s, std::string_view prefix, int& index) {
  int64_t v = 0;
  if (s.substr(0, prefix.size()) != prefix || !parseInt(s.substr(prefix.size()), v) || v > 1 << 20)
    return false;
  index = static_cast<int>(v);
  return true;
}

Result<DimExpr> expr(std::string_view s, const std::string& what) {
  auto e = parseDimExpr(s);
  if (!e) return Status::invalid(what + ": " + e.status().message());
  return e;
}

template <typename T>
T read(std::span<const uint8_t> b, size_t at) {
  T v{};
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

constexpr uint16_t kEmCuda = 190;

struct Section {
  std::string name;
  size_t offset = 0, size = 0;
};

// The section table of a 64-bit little-endian ELF file, bounds-checked.
Result<std::vector<Section>> sections(std::span<const uint8_t> b) {
  auto bad = [](const std::string& why) {
    return Status::invalid("the cubin is not a valid ELF file: " + why);
  };
  if (b.size() < 64 || b[4] != 2 || b[5] != 1) return bad("not a 64-bit little-endian ELF");
  const auto shoff = read<uint64_t>(b, 0x28);
  const auto shentsize = read<uint16_t>(b, 0x3A);
  const auto shnum = read<uint16_t>(b, 0x3C);
  const auto shstrndx = read<uint16_t>(b, 0x3E);
  if (shentsize < 64 || shoff > b.size() || shnum > (b.size() - shoff) / shentsize ||
      shstrndx >= shnum)
    return bad("its section table is out of bounds");
  std::vector<Section> out(shnum);
  for (size_t i = 0; i < shnum; ++i) {
    const size_t h = shoff + i * shentsize;
    out[i].offset = read<uint64_t>(b, h + 0x18);
    out[i].size = read<uint64_t>(b, h + 0x20);
    const uint32_t type = read<uint32_t>(b, h + 4);
    if (type != 8 /* SHT_NOBITS */ &&
        (out[i].offset > b.size() || out[i].size > b.size() - out[i].offset))
      return bad("section " + std::to_string(i) + " is out of bounds");
  }
  const Section& strtab = out[shstrndx];
  for (size_t i = 0; i < shnum; ++i) {
    const uint32_t name = read<uint32_t>(b, shoff + i * shentsize);
    if (name >= strtab.size) return bad("a section name is out of bounds");
    const char* p = reinterpret_cast<const char*>(b.data() + strtab.offset + name);
    out[i].name.assign(p, strnlen(p, strtab.size - name));
  }
  return out;
}

std::string_view ptxText(std::span<const uint8_t> image) {
  std::string_view t(reinterpret_cast<const char*>(image.data()), image.size());
  const size_t nul = t.find('\0');
  return nul == std::string_view::npos ? t : t.substr(0, nul);
}

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

// Size of a PTX scalar type (".u32", ".f64", ".pred"...), 0 when unknown.
size_t ptxTypeBytes(std::string_view t) {
  if (t.size() < 3) return 0;
  int64_t bits = 0;
  if (!parseInt(t.substr(2), bits)) return 0;
  const char c = t[1];
  if (c != 'u' && c != 's' && c != 'b' && c != 'f') return 0;
  return bits % 8 == 0 ? static_cast<size_t>(bits / 8) : 0;
}

Result<KernelInfo> ptxKernel(std::string_view t, const std::string& kernel) {
  size_t at = 0;
  for (;;) {
    at = t.find(".entry", at);
    if (at == std::string_view::npos)
      return Status::notFound("the PTX has no kernel (.entry) named '" + kernel + "'");
    size_t p = at + 6;
    while (p < t.size() && std::isspace(static_cast<unsigned char>(t[p]))) ++p;
    if (t.substr(p, kernel.size()) == kernel &&
        (p + kernel.size() >= t.size() || !isIdentChar(t[p + kernel.size()]))) {
      at = p + kernel.size();
      break;
    }
    at = p;
  }
  KernelInfo info;
  size_t p = at;
  while (p < t.size() && std::isspace(static_cast<unsigned char>(t[p]))) ++p;
  const size_t body = t.find('{', p);
  if (body == std::string_view::npos) return Status::invalid("the PTX kernel has no body");
  if (p < t.size() && t[p] == '(') {
    const size_t close = t.find(')', p);
    if (close == std::string_view::npos || close > body)
      return Status::invalid("the PTX kernel's parameter list is not closed");
    size_t offset = 0;
    for (auto param : splitTop(t.substr(p + 1, close - p - 1), ',')) {
      if (param.empty()) continue;
      size_t bytes = 0, align = 0;
      std::vector<std::string_view> words;
      size_t w = 0;
      while (w < param.size()) {
        while (w < param.size() && std::isspace(static_cast<unsigned char>(param[w]))) ++w;
        size_t e = w;
        while (e < param.size() && !std::isspace(static_cast<unsigned char>(param[e]))) ++e;
        if (e > w) words.push_back(param.substr(w, e - w));
        w = e;
      }
      bool ptr = false;
      for (size_t i = 0; i < words.size(); ++i) {
        if (words[i] == ".ptr") ptr = true;
        if (words[i] == ".align" && i + 1 < words.size() && !ptr) {
          int64_t v = 0;
          if (parseInt(words[i + 1], v)) align = static_cast<size_t>(v);
        }
        if (bytes == 0 && words[i] != ".param" && words[i][0] == '.')
          bytes = ptxTypeBytes(words[i]);
      }
      // An array parameter: ".param .align 8 .b8 name[16]".
      const std::string_view last = words.empty() ? std::string_view() : words.back();
      const size_t lb = last.find('[');
      if (lb != std::string_view::npos && last.back() == ']') {
        int64_t n = 0;
        if (!parseInt(last.substr(lb + 1, last.size() - lb - 2), n))
          return Status::invalid("PTX parameter '" + std::string(param) + "' is not understood");
        bytes *= static_cast<size_t>(n);
      } else {
        align = bytes;
      }
      if (bytes == 0 || align == 0)
        return Status::invalid("PTX parameter '" + std::string(param) + "' is not understood");
      offset = (offset + align - 1) / align * align;
      info.params.emplace_back(offset, bytes);
      offset += bytes;
    }
  }
  // Performance directives between the parameters and the body.
  const std::string_view head = t.substr(p, body - p);
  const size_t rq = head.find(".reqntid");
  if (rq != std::string_view::npos) {
    std::vector<int64_t> dims;
    size_t q = rq + 8;
    const size_t end = head.find_first_of("\n{.", q);
    for (auto part :
         splitTop(head.substr(q, end == std::string_view::npos ? head.npos : end - q), ',')) {
      int64_t v = 0;
      if (parseInt(part, v)) dims.push_back(v);
    }
    while (dims.size() < 3) dims.push_back(1);
    info.reqntid = dims;
  }
  return info;
}

Result<KernelInfo> cubinKernel(std::span<const uint8_t> b, const std::string& kernel) {
  OPFORGE_ASSIGN_OR_RETURN(auto secs, sections(b));
  bool has_text = false;
  const Section* nvinfo = nullptr;
  for (const auto& s : secs) {
    has_text |= s.name == ".text." + kernel;
    if (s.name == ".nv.info." + kernel) nvinfo = &s;
  }
  if (!has_text)
    return Status::notFound("the cubin has no kernel (section .text." + kernel + ") named '" +
                            kernel + "'");
  KernelInfo info;
  if (!nvinfo) return info;  // no parameter table: nothing to compare with
  // EIATTR records: format (1: none, 2: byte, 3: half word, 4: sized), attribute, then a 16-bit
  // value, or a 16-bit size and that many bytes.
  std::vector<std::pair<uint16_t, std::pair<size_t, size_t>>> params;  // ordinal, (offset, size)
  const auto sec = b.subspan(nvinfo->offset, nvinfo->size);
  size_t p = 0;
  while (p + 4 <= sec.size()) {
    const uint8_t fmt = sec[p], attr = sec[p + 1];
    const uint16_t v = read<uint16_t>(sec, p + 2);
    if (fmt != 4) {
      p += 4;
      continue;
    }
    if (p + 4 + v > sec.size()) break;
    const auto data = sec.subspan(p + 4, v);
    if (attr == 0x17 && v >= 12) {  // EIATTR_KPARAM_INFO
      const uint16_t ordinal = read<uint16_t>(data, 4), offset = read<uint16_t>(data, 6);
      const uint32_t word = read<uint32_t>(data, 8);
      params.push_back({ordinal, {offset, (word >> 18) & 0x3FFF}});
    } else if (attr == 0x10 && v >= 12) {  // EIATTR_REQNTID
      info.reqntid = std::vector<int64_t>{read<uint32_t>(data, 0), read<uint32_t>(data, 4),
                                          read<uint32_t>(data, 8)};
    }
    p += 4 + v;
  }
  std::sort(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].first != i)
      return Status::invalid("the cubin's parameter table of '" + kernel + "' is not understood");
    info.params.push_back(params[i].second);
  }
  return info;
}

std::string argList(const std::vector<Arg>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : ", ") + a.text;
  return s;
}

}  // namespace

size_t Arg::bytes() const {
  switch (kind) {
    case Kind::kI32:
    case Kind::kF32:
      return 4;
    default:
      return 8;
  }
}

int64_t imageHash(std::span<const uint8_t> bytes) {
  uint64_t h = 14695981039346656037ull;
  for (uint8_t c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<int64_t>(h);
}

Result<ImageInfo> inspectImage(std::span<const uint8_t> image) {
  ImageInfo info;
  if (image.size() >= 4 && std::memcmp(image.data(),
                                       "\x7f"
                                       "ELF",
                                       4) == 0) {
    if (image.size() < 64) return Status::invalid("the cubin is shorter than an ELF header");
    const auto machine = read<uint16_t>(image, 18);
    if (machine != kEmCuda)
      return Status::invalid("the ELF image is for machine " + std::to_string(machine) +
                             ", not CUDA (190): not a cubin");
    const uint32_t flags = read<uint32_t>(image, 48);
    // e_flags hold the SM: bits 8-15 from ELF ABI version 8 (CUDA 12.8+), bits 0-7 before.
    info.cubin = true;
    info.sm =
        image[8] >= 8 ? static_cast<int>((flags >> 8) & 0xFF) : static_cast<int>(flags & 0xFF);
    OPFORGE_RETURN_IF_ERROR(sections(image).status());
    return info;
  }
  const std::string_view t = ptxText(image);
  const size_t target = t.find(".target");
  if (target == std::string_view::npos || t.find(".version") == std::string_view::npos)
    return Status::invalid(
        "the image is neither a cubin (an ELF file) nor PTX text (with .version and .target)");
  size_t p = target + 7;
  while (p < t.size() && std::isspace(static_cast<unsigned char>(t[p]))) ++p;
  int64_t sm = 0;
  size_t e = p + 3;
  while (e < t.size() && std::isdigit(static_cast<unsigned char>(t[e]))) ++e;
  if (t.substr(p, 3) != "sm_" || !parseInt(t.substr(p + 3, e - p - 3), sm))
    return Status::invalid("the PTX's .target is not sm_XY");
  info.sm = static_cast<int>(sm);
  return info;
}

Result<KernelInfo> kernelInfo(std::span<const uint8_t> image, const std::string& kernel) {
  OPFORGE_ASSIGN_OR_RETURN(ImageInfo info, inspectImage(image));
  return info.cubin ? cubinKernel(image, kernel) : ptxKernel(ptxText(image), kernel);
}

Result<std::vector<std::span<const uint8_t>>> splitImages(const AttrMap& a) {
  // Spans into the map's own value (AttrMap::get returns a copy).
  const AttrValue* v = a.find("images");
  const Bytes* b = v ? std::get_if<Bytes>(v) : nullptr;
  if (!b) return Status::invalid("attribute 'images' is missing or not bytes");
  const std::vector<uint8_t>& images = b->data;
  const auto sizes = a.get<std::vector<int64_t>>("image_sizes");
  std::vector<std::span<const uint8_t>> out;
  size_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] <= 0 || static_cast<uint64_t>(sizes[i]) > images.size() - at)
      return Status::invalid("attribute 'image_sizes': image " + std::to_string(i) + " has " +
                             std::to_string(sizes[i]) + " bytes; 'images' holds " +
                             std::to_string(images.size()) + " bytes in all");
    out.emplace_back(images.data() + at, static_cast<size_t>(sizes[i]));
    at += static_cast<size_t>(sizes[i]);
  }
  if (sizes.empty() || at != images.size())
    return Status::invalid("attribute 'image_sizes' (" + std::to_string(sizes.size()) +
                           " images, " + std::to_string(at) + " bytes) does not cover 'images' (" +
                           std::to_string(images.size()) + " bytes)");
  return out;
}

Result<std::vector<Launch>> parseLaunches(const std::string& text) {
  std::vector<Launch> out;
  for (auto line : lines(text)) {
    Launch l;
    l.text = std::string(line);
    const std::string where =
        "attribute 'launches': launch " + std::to_string(out.size()) + " (\"" + l.text + "\")";
    std::set<std::string> seen;
    for (auto field : splitTop(line, ';')) {
      const size_t eq = field.find('=');
      if (eq == std::string_view::npos)
        return Status::invalid(where + ": field \"" + std::string(field) + "\" is not key=value");
      const std::string key(trim(field.substr(0, eq)));
      const std::string_view value = trim(field.substr(eq + 1));
      if (!seen.insert(key).second) return Status::invalid(where + ": field '" + key + "' twice");
      if (key == "kernel") {
        l.kernel = std::string(value);
      } else if (key == "image") {
        int64_t v = 0;
        if (!parseInt(value, v) || v > 1 << 20)
          return Status::invalid(where + ": image \"" + std::string(value) + "\" is not an index");
        l.image = static_cast<int>(v);
      } else if (key == "variant") {
        int64_t v = 0;
        if (!parseInt(value, v) || v >= kMaxVariants)
          return Status::invalid(where + ": variant \"" + std::string(value) + "\" is not 0 to " +
                                 std::to_string(kMaxVariants - 1));
        l.variant = static_cast<int>(v);
      } else if (key == "grid" || key == "block") {
        auto parts = splitTop(value, ',');
        if (parts.size() != 3)
          return Status::invalid(where + ": " + key + " needs 3 expressions (x, y, z), got " +
                                 std::to_string(parts.size()));
        DimExpr* dst = key == "grid" ? l.grid : l.block;
        for (int i = 0; i < 3; ++i) {
          auto e = expr(parts[i], where + ": " + key);
          if (!e) return e.status();
          dst[i] = *e;
        }
      } else if (key == "shared") {
        OPFORGE_ASSIGN_OR_RETURN(l.shared, expr(value, where + ": shared"));
      } else if (key == "args") {
        if (value.empty()) continue;
        for (auto a : splitTop(value, ',')) {
          Arg arg;
          arg.text = std::string(a);
          const size_t colon = a.find(':');
          const std::string_view kind = a.substr(0, colon);
          const std::string_view rest =
              colon == std::string_view::npos ? std::string_view() : a.substr(colon + 1);
          const std::string awhere =
              where + ": argument " + std::to_string(l.args.size()) + " (\"" + arg.text + "\")";
          if (indexAfter(a, "in", arg.index)) {
            arg.kind = Arg::Kind::kInput;
          } else if (indexAfter(a, "out", arg.index)) {
            arg.kind = Arg::Kind::kOutput;
          } else if (a == "null") {
            arg.kind = Arg::Kind::kNull;
          } else if (kind == "i32" || kind == "i64") {
            arg.kind = kind == "i32" ? Arg::Kind::kI32 : Arg::Kind::kI64;
            OPFORGE_ASSIGN_OR_RETURN(arg.expr, expr(rest, awhere));
          } else if (kind == "f32" || kind == "f64") {
            arg.kind = kind == "f32" ? Arg::Kind::kF32 : Arg::Kind::kF64;
            const std::string v(rest);
            char* end = nullptr;
            errno = 0;
            arg.value = std::strtod(v.c_str(), &end);
            if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE)
              return Status::invalid(awhere + ": \"" + v + "\" is not a float");
          } else if (kind == "scratch") {
            arg.kind = Arg::Kind::kScratch;
            auto sp = splitTop(rest, ':');
            if (sp.size() != 2 || !parseInt(sp[1], arg.align) || arg.align < 1 ||
                arg.align > 4096 || (arg.align & (arg.align - 1)) != 0)
              return Status::invalid(awhere +
                                     ": scratch is scratch:BYTES_PER_PROGRAM:ALIGN (ALIGN a "
                                     "power of two up to 4096)");
            OPFORGE_ASSIGN_OR_RETURN(arg.expr, expr(sp[0], awhere));
          } else {
            return Status::invalid(awhere +
                                   ": an argument is in<k>, out<k>, i32:EXPR, i64:EXPR, f32:VALUE, "
                                   "f64:VALUE, scratch:EXPR:ALIGN or null");
          }
          l.args.push_back(std::move(arg));
        }
      } else {
        return Status::invalid(where + ": unknown field '" + key +
                               "' (fields: kernel, image, variant, grid, block, shared, args)");
      }
    }
    if (l.kernel.empty()) return Status::invalid(where + ": no kernel=NAME");
    if (!seen.count("grid") || !seen.count("block"))
      return Status::invalid(where + ": grid and block are required");
    out.push_back(std::move(l));
  }
  if (out.empty()) return Status::invalid("attribute 'launches' holds no launch");
  const int n = variantCount(out);
  for (int v = 0; v < n; ++v)
    if (std::none_of(out.begin(), out.end(), [&](const Launch& l) { return l.variant == v; }))
      return Status::invalid("attribute 'launches': variant " + std::to_string(v) +
                             " has no launch, but variant " + std::to_string(n - 1) +
                             " has (variants are numbered 0, 1, ... without a gap)");
  return out;
}

int variantCount(const std::vector<Launch>& launches) {
  int n = 0;
  for (const auto& l : launches) n = std::max(n, l.variant + 1);
  return n;
}

Result<std::vector<OutputSpec>> parseOutputs(const std::string& text) {
  std::vector<OutputSpec> out;
  for (auto line : lines(text)) {
    const std::string where = "attribute 'outputs': output " + std::to_string(out.size()) + " (\"" +
                              std::string(line) + "\")";
    const size_t lb = line.find('['), rb = line.rfind(']');
    if (lb == std::string_view::npos || rb == std::string_view::npos || rb < lb)
      return Status::invalid(where + ": not DTYPE[dim, ...] [alias=K]");
    OutputSpec o;
    auto dt = parseDataType(trim(line.substr(0, lb)));
    if (!dt) return Status::invalid(where + ": unknown dtype");
    o.dtype = *dt;
    const std::string_view dims = trim(line.substr(lb + 1, rb - lb - 1));
    if (!dims.empty())
      for (auto d : splitTop(dims, ',')) {
        OPFORGE_ASSIGN_OR_RETURN(auto e, expr(d, where));
        o.dims.push_back(std::move(e));
      }
    const std::string_view rest = trim(line.substr(rb + 1));
    if (!rest.empty()) {
      int64_t k = 0;
      if (rest.substr(0, 6) != "alias=" || !parseInt(rest.substr(6), k) || k > 1 << 20)
        return Status::invalid(where + ": after the dims only alias=K (an input index)");
      o.alias = static_cast<int>(k);
    }
    out.push_back(std::move(o));
  }
  if (out.empty()) return Status::invalid("attribute 'outputs' describes no output");
  return out;
}

Status checkAttrs(const AttrMap& a) {
  const auto& images = a.get<Bytes>("images").data;
  if (imageHash(images) != a.get<int64_t>("image_hash"))
    return Status::invalid("attribute 'image_hash' (" +
                           std::to_string(a.get<int64_t>("image_hash")) +
                           ") is not the FNV-1a hash of 'images' (" +
                           std::to_string(imageHash(images)) + "): tampered or damaged");
  const int64_t arch = a.get<int64_t>("arch");
  if (arch < 10 || arch > 255)
    return Status::invalid("attribute 'arch' is " + std::to_string(arch) +
                           ", not an SM number (90 for sm_90)");
  OPFORGE_ASSIGN_OR_RETURN(auto imgs, splitImages(a));
  for (size_t i = 0; i < imgs.size(); ++i) {
    auto info = inspectImage(imgs[i]);
    if (!info)
      return Status::invalid("image " + std::to_string(i) + ": " + info.status().message());
    if (info->cubin ? info->sm != arch : info->sm > arch)
      return Status::invalid("image " + std::to_string(i) + " is " +
                             (info->cubin ? "a cubin for sm_" : "PTX for sm_") +
                             std::to_string(info->sm) + ", but attribute 'arch' says sm_" +
                             std::to_string(arch));
  }
  const auto dtypes = a.get<std::vector<int32_t>>("input_dtypes");
  const auto ranks = a.get<std::vector<int32_t>>("input_ranks");
  if (dtypes.size() != ranks.size() || dtypes.empty())
    return Status::invalid("attributes 'input_dtypes' (" + std::to_string(dtypes.size()) +
                           ") and 'input_ranks' (" + std::to_string(ranks.size()) +
                           ") must describe the same inputs, at least one");
  for (size_t i = 0; i < dtypes.size(); ++i)
    if (!isKnownDataType(dtypes[i]) || ranks[i] < 0 || ranks[i] > 64)
      return Status::invalid("input " + std::to_string(i) + ": dtype " + std::to_string(dtypes[i]) +
                             " / rank " + std::to_string(ranks[i]) +
                             " is not a tensor opforge stores");
  std::string rank_list;
  for (int x : ranks) rank_list += (rank_list.empty() ? "" : ", ") + std::to_string(x);
  // Expressions may name only the inputs' dimensions.
  auto symbolsOk = [&](const DimExpr& e, const std::string& where) -> Status {
    std::set<std::string> syms;
    e.collectSymbols(syms);
    for (const auto& s : syms) {
      const size_t dot = s.find('.');
      int k = -1;
      int64_t d = -1;
      if (dot == std::string::npos || !indexAfter(std::string_view(s).substr(0, dot), "in", k) ||
          !parseInt(std::string_view(s).substr(dot + 1), d) ||
          k >= static_cast<int>(ranks.size()) || d >= ranks[k])
        return Status::invalid(where + ": symbol '" + s +
                               "' is not in<k>.<d>, a dimension of one of the " +
                               std::to_string(ranks.size()) + " inputs (ranks " + rank_list + ")");
    }
    return Status::ok();
  };
  OPFORGE_ASSIGN_OR_RETURN(auto outs, parseOutputs(a.get<std::string>("outputs")));
  for (size_t o = 0; o < outs.size(); ++o) {
    const std::string where = "attribute 'outputs': output " + std::to_string(o);
    for (const auto& d : outs[o].dims) OPFORGE_RETURN_IF_ERROR(symbolsOk(d, where));
    if (outs[o].alias >= static_cast<int>(dtypes.size()))
      return Status::invalid(where + ": alias=" + std::to_string(outs[o].alias) +
                             " is not an input");
  }
  OPFORGE_ASSIGN_OR_RETURN(auto launches, parseLaunches(a.get<std::string>("launches")));
  const auto tactics = a.get<std::vector<int64_t>>("variant_tactics");
  if (!tactics.empty() && static_cast<int>(tactics.size()) != variantCount(launches))
    return Status::invalid("attribute 'variant_tactics' names " + std::to_string(tactics.size()) +
                           " tactics; the launches hold " + std::to_string(variantCount(launches)) +
                           " variants");
  for (size_t l = 0; l < launches.size(); ++l) {
    const Launch& L = launches[l];
    const std::string where =
        "attribute 'launches': launch " + std::to_string(l) + " (kernel '" + L.kernel + "')";
    if (L.image >= static_cast<int>(imgs.size()))
      return Status::invalid(where + ": image " + std::to_string(L.image) + " does not exist (" +
                             std::to_string(imgs.size()) + " images)");
    for (int i = 0; i < 3; ++i) {
      OPFORGE_RETURN_IF_ERROR(symbolsOk(L.grid[i], where + ": grid"));
      OPFORGE_RETURN_IF_ERROR(symbolsOk(L.block[i], where + ": block"));
    }
    OPFORGE_RETURN_IF_ERROR(symbolsOk(L.shared, where + ": shared"));
    for (const auto& arg : L.args) {
      const std::string awhere = where + ": argument \"" + arg.text + "\"";
      if (arg.kind == Arg::Kind::kInput && arg.index >= static_cast<int>(dtypes.size()))
        return Status::invalid(awhere + ": the node has " + std::to_string(dtypes.size()) +
                               " inputs");
      if (arg.kind == Arg::Kind::kOutput && arg.index >= static_cast<int>(outs.size()))
        return Status::invalid(awhere + ": the node has " + std::to_string(outs.size()) +
                               " outputs");
      if (arg.kind == Arg::Kind::kI32 || arg.kind == Arg::Kind::kI64 ||
          arg.kind == Arg::Kind::kScratch)
        OPFORGE_RETURN_IF_ERROR(symbolsOk(arg.expr, awhere));
    }
    auto info = kernelInfo(imgs[L.image], L.kernel);
    if (!info) return Status(info.status().code(), where + ": " + info.status().message());
    if (!info->params.empty() || L.args.empty()) {
      size_t offset = 0;
      std::vector<std::pair<size_t, size_t>> mine;
      for (const auto& arg : L.args) {
        offset = (offset + arg.bytes() - 1) / arg.bytes() * arg.bytes();
        mine.emplace_back(offset, arg.bytes());
        offset += arg.bytes();
      }
      if (mine.size() != info->params.size())
        return Status::invalid(
            where + ": the kernel takes " + std::to_string(info->params.size()) +
            " parameters; the launch passes " + std::to_string(mine.size()) + " (" +
            argList(L.args) +
            "). A Triton 3.x kernel takes two more pointers at the end (global and profile "
            "scratch): add them (opforge.plugin.triton.launch does)");
      for (size_t i = 0; i < mine.size(); ++i)
        if (mine[i] != info->params[i])
          return Status::invalid(where + ": argument " + std::to_string(i) + " (\"" +
                                 L.args[i].text + "\") is " + std::to_string(mine[i].second) +
                                 " bytes at offset " + std::to_string(mine[i].first) +
                                 "; the kernel's parameter " + std::to_string(i) + " is " +
                                 std::to_string(info->params[i].second) + " bytes at offset " +
                                 std::to_string(info->params[i].first));
    }
    if (info->reqntid && L.block[0].isConst() && L.block[1].isConst() && L.block[2].isConst()) {
      const auto& r = *info->reqntid;
      if (L.block[0].constValue() != r[0] || L.block[1].constValue() != r[1] ||
          L.block[2].constValue() != r[2])
        return Status::invalid(
            where + ": block is (" + L.block[0].toString() + ", " + L.block[1].toString() + ", " +
            L.block[2].toString() + ") but the kernel requires (" + std::to_string(r[0]) + ", " +
            std::to_string(r[1]) + ", " + std::to_string(r[2]) + ") threads (.reqntid)");
    }
  }
  return Status::ok();
}

Result<int64_t> evalWith(const DimExpr& e, std::span<const TensorDesc> inputs) {
  return e.eval([&](const std::string& s) -> std::optional<int64_t> {
    const size_t dot = s.find('.');
    int k = -1;
    int64_t d = -1;
    if (dot == std::string::npos || !indexAfter(std::string_view(s).substr(0, dot), "in", k) ||
        !parseInt(std::string_view(s).substr(dot + 1), d) || k >= static_cast<int>(inputs.size()) ||
        d >= inputs[k].rank())
      return std::nullopt;
    return inputs[k].dims[d];
  });
}

}  // namespace opforge::ops::aot
