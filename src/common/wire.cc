#include "wire.h"

namespace opforge::wire {

std::string Reader::str() {
  uint64_t n = count(1, "string length");
  std::string s;
  if (!ok_) return s;
  s.assign(reinterpret_cast<const char*>(p_), n);
  p_ += n;
  return s;
}

std::vector<uint8_t> Reader::blob() {
  uint64_t n = count(1, "blob length");
  std::vector<uint8_t> b;
  if (!ok_) return b;
  b.assign(p_, p_ + n);
  p_ += n;
  return b;
}

uint64_t Reader::count(size_t min_bytes, const char* field) {
  uint64_t n = u64();
  if (!ok_) return 0;
  size_t left = static_cast<size_t>(end_ - p_);
  if (min_bytes && n > left / min_bytes) {
    fail(std::string("count of ") + field + " (" + std::to_string(n) + ") exceeds the " +
         std::to_string(left) + " bytes left");
    return 0;
  }
  return n;
}

bool Reader::raw(void* dst, size_t n, const char* field) {
  if (n == 0) return ok_;  // memcpy/memset of nothing may still not take a null pointer
  if (!ok_) {
    std::memset(dst, 0, n);
    return false;
  }
  if (static_cast<size_t>(end_ - p_) < n) {
    fail(std::string("unexpected end of data reading ") + field);
    std::memset(dst, 0, n);
    return false;
  }
  std::memcpy(dst, p_, n);
  p_ += n;
  return true;
}

const uint8_t* Reader::skip(size_t n, const char* field) {
  if (!ok_) return nullptr;
  if (static_cast<size_t>(end_ - p_) < n) {
    fail(std::string("unexpected end of data reading ") + field);
    return nullptr;
  }
  const uint8_t* q = p_;
  p_ += n;
  return q;
}

void Reader::fail(const std::string& message) {
  if (!ok_) return;
  ok_ = false;
  error_ = what_ + ": " + message + " (at byte " + std::to_string(offset()) + ")";
}

// ---------------------------------------------------------------------------------------------

void put(Writer& w, const DimExpr& e) {
  w.u8(static_cast<uint8_t>(e.kind()));
  switch (e.kind()) {
    case DimExpr::Kind::kConst:
      w.i64(e.constValue());
      return;
    case DimExpr::Kind::kSymbol:
      w.str(e.symbolName());
      return;
    default:
      put(w, e.lhs());
      put(w, e.rhs());
  }
}

namespace {
DimExpr getDimExprDepth(Reader& r, int depth) {
  if (depth > 256) {
    r.fail("dimension expression nested too deeply");
    return DimExpr();
  }
  auto k = static_cast<DimExpr::Kind>(r.u8());
  switch (k) {
    case DimExpr::Kind::kConst:
      return DimExpr(r.i64());
    case DimExpr::Kind::kSymbol:
      return DimExpr::symbol(r.str());
    case DimExpr::Kind::kAdd:
    case DimExpr::Kind::kSub:
    case DimExpr::Kind::kMul:
    case DimExpr::Kind::kFloorDiv:
    case DimExpr::Kind::kCeilDiv:
    case DimExpr::Kind::kMin:
    case DimExpr::Kind::kMax: {
      DimExpr a = getDimExprDepth(r, depth + 1);
      DimExpr b = getDimExprDepth(r, depth + 1);
      return r.ok() ? DimExpr::binary(k, a, b) : DimExpr();
    }
  }
  r.fail("bad dimension expression kind " + std::to_string(static_cast<int>(k)));
  return DimExpr();
}
}  // namespace

DimExpr getDimExpr(Reader& r) {
  return getDimExprDepth(r, 0);
}

void put(Writer& w, const std::vector<DimExpr>& dims) {
  putList(w, dims, [](Writer& w, const DimExpr& d) { put(w, d); });
}

std::vector<DimExpr> getDims(Reader& r) {
  return getList(r, kMinDimExprBytes, "dimensions", getDimExpr);
}

void put(Writer& w, const TensorDesc& d) {
  w.i32(static_cast<int32_t>(d.dtype));
  w.i32(static_cast<int32_t>(d.format));
  putScalars(w, d.dims);
}

TensorDesc getTensorDesc(Reader& r) {
  TensorDesc d;
  int32_t t = r.i32();
  if (r.ok() && !isKnownDataType(t)) r.fail("unknown data type " + std::to_string(t));
  d.dtype = static_cast<DataType>(t);
  int32_t f = r.i32();
  if (r.ok() && f != 0 && f != 1) r.fail("unknown format " + std::to_string(f));
  d.format = static_cast<Format>(f);
  d.dims = getScalars<int64_t>(r, "tensor dims");
  return d;
}

void put(Writer& w, const AttrValue& v) {
  w.u8(static_cast<uint8_t>(v.index()));
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, int64_t>) {
          w.i64(x);
        } else if constexpr (std::is_same_v<T, double>) {
          w.f64(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.str(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          w.boolean(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          w.blob(x.data.data(), x.data.size());
        } else if constexpr (std::is_same_v<T, TensorValue>) {
          put(w, x.desc);
          w.blob(x.data.data(), x.data.size());
        } else {
          putScalars(w, x);
        }
      },
      v);
}

AttrValue getAttrValue(Reader& r) {
  uint8_t idx = r.u8();
  switch (idx) {
    case 0:
      return std::monostate{};
    case 1:
      return r.i64();
    case 2:
      return r.f64();
    case 3:
      return r.str();
    case 4:
      return r.boolean();
    case 5:
      return Bytes{r.blob()};
    case 6:
      return getScalars<int8_t>(r, "list");
    case 7:
      return getScalars<int16_t>(r, "list");
    case 8:
      return getScalars<int32_t>(r, "list");
    case 9:
      return getScalars<int64_t>(r, "list");
    case 10:
      return getScalars<half>(r, "list");
    case 11:
      return getScalars<float>(r, "list");
    case 12:
      return getScalars<double>(r, "list");
    case 13:
      return getScalars<bool>(r, "bool list");
    case 14: {
      TensorValue t;
      t.desc = getTensorDesc(r);
      t.data = r.blob();
      if (r.ok() && t.data.size() != t.desc.bytes()) r.fail("tensor attribute size mismatch");
      return t;
    }
    default:
      r.fail("bad attribute type tag " + std::to_string(idx));
  }
  return std::monostate{};
}

void put(Writer& w, const AttrMap& m) {
  w.u64(m.all().size());
  for (const auto& [k, v] : m.all()) {
    w.str(k);
    put(w, v);
  }
}

AttrMap getAttrMap(Reader& r) {
  AttrMap m;
  // The smallest attribute is an empty name (8 bytes) and an empty value's tag (1 byte).
  uint64_t n = r.count(9, "attributes");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    std::string k = r.str();
    m.set(k, getAttrValue(r));
  }
  return m;
}

namespace {
void putIo(Writer& w, const IoDef& io) {
  w.str(io.name);
  w.boolean(io.optional);
  w.boolean(io.variadic);
  w.boolean(io.value);
  w.str(io.doc);
  w.boolean(io.shape_only);
}
IoDef getIo(Reader& r) {
  IoDef io;
  io.name = r.str();
  io.optional = r.boolean();
  io.variadic = r.boolean();
  io.value = r.boolean();
  io.doc = r.str();
  io.shape_only = r.boolean();
  return io;
}
void putPos(Writer& w, const std::vector<std::pair<std::vector<int>, std::string>>& pos) {
  w.u64(pos.size());
  for (const auto& [idx, s] : pos) {
    w.u64(idx.size());
    for (int i : idx) w.i32(i);
    w.str(s);
  }
}
std::vector<std::pair<std::vector<int>, std::string>> getPos(Reader& r) {
  std::vector<std::pair<std::vector<int>, std::string>> out;
  uint64_t n = r.count(16, "combination positions");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    std::vector<int> idx;
    uint64_t m = r.count(4, "position list");
    for (uint64_t j = 0; j < m && r.ok(); ++j) idx.push_back(r.i32());
    out.emplace_back(std::move(idx), r.str());
  }
  return out;
}
}  // namespace

void put(Writer& w, const OpSchema& s) {
  w.str(s.ns);
  w.str(s.name);
  w.str(s.version);
  w.str(s.doc);
  w.u64(s.inputs.size());
  for (const auto& io : s.inputs) putIo(w, io);
  w.u64(s.outputs.size());
  for (const auto& io : s.outputs) putIo(w, io);
  w.u64(s.attrs.size());
  for (const auto& a : s.attrs) {
    w.str(a.name);
    w.i32(static_cast<int32_t>(a.type));
    w.boolean(a.default_value.has_value());
    if (a.default_value) put(w, *a.default_value);
    w.str(a.doc);
    w.boolean(a.optional);
  }
  w.u64(s.combos.size());
  for (const auto& c : s.combos) {
    w.str(c.types);
    w.str(c.formats);
    putPos(w, c.pos_types);
    putPos(w, c.pos_formats);
    w.u64(c.tactic_ids.size());
    for (int32_t t : c.tactic_ids) w.i32(t);
  }
  w.u64(s.tactics.size());
  for (const auto& t : s.tactics) {
    w.i32(t.id);
    w.str(t.name);
    w.i32(static_cast<int32_t>(t.backend));
    w.boolean(t.tf32);
    w.boolean(t.in_place);
  }
  w.u64(s.aliases.size());
  for (const auto& a : s.aliases) w.str(a);
  w.str(s.backward);
  w.boolean(s.elementwise);
  w.str(s.kind);
  w.boolean(s.plan_attrs_only);
  w.u64(s.plan_attrs.size());
  for (const auto& a : s.plan_attrs) w.str(a);
}

OpSchema getSchema(Reader& r) {
  OpSchema s;
  s.ns = r.str();
  s.name = r.str();
  s.version = r.str();
  s.doc = r.str();
  uint64_t n = r.count(12, "inputs");
  for (uint64_t i = 0; i < n && r.ok(); ++i) s.inputs.push_back(getIo(r));
  n = r.count(12, "outputs");
  for (uint64_t i = 0; i < n && r.ok(); ++i) s.outputs.push_back(getIo(r));
  n = r.count(13, "attributes");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    AttrDef a;
    a.name = r.str();
    a.type = static_cast<AttrType>(r.i32());
    if (r.boolean()) a.default_value = getAttrValue(r);
    a.doc = r.str();
    a.optional = r.boolean();
    s.attrs.push_back(std::move(a));
  }
  n = r.count(40, "combinations");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    Combo c;
    c.types = r.str();
    c.formats = r.str();
    c.pos_types = getPos(r);
    c.pos_formats = getPos(r);
    uint64_t m = r.count(4, "tactic ids");
    for (uint64_t j = 0; j < m && r.ok(); ++j) c.tactic_ids.push_back(r.i32());
    s.combos.push_back(std::move(c));
  }
  n = r.count(17, "tactics");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    OpSchema::Tactic t;
    t.id = r.i32();
    t.name = r.str();
    t.backend = static_cast<Backend>(r.i32());
    t.tf32 = r.boolean();
    t.in_place = r.boolean();
    s.tactics.push_back(std::move(t));
  }
  n = r.count(8, "aliases");
  for (uint64_t i = 0; i < n && r.ok(); ++i) s.aliases.push_back(r.str());
  s.backward = r.str();
  s.elementwise = r.boolean();
  s.kind = r.str();
  s.plan_attrs_only = r.boolean();
  n = r.count(8, "plan attributes");
  for (uint64_t i = 0; i < n && r.ok(); ++i) s.plan_attrs.push_back(r.str());
  return s;
}

uint64_t checksum(const void* data, size_t size, uint64_t h) {
  // FNV-1a's xor-multiply step applied to 64-bit words (8x fewer steps than per byte), then
  // to the tail bytes; a final avalanche spreads every input bit over the result.
  const auto* p = static_cast<const uint8_t*>(data);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace opforge::wire
