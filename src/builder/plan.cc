#include "plan.h"

#include <cstring>

#include "../common/wire.h"
#include "opforge/plugin_abi.h"

namespace opforge::plan {

namespace {
void putTensor(wire::Writer& w, const Tensor& t) {
  w.str(t.name);
  w.i32(static_cast<int32_t>(t.dtype));
  w.i32(static_cast<int32_t>(t.format));
  wire::put(w, t.dims);
  w.u8(static_cast<uint8_t>(t.kind));
  w.boolean(t.is_output);
  w.u64(t.weight_offset);
  w.u64(t.weight_bytes);
  w.i32(t.storage);
}

Tensor getTensor(wire::Reader& r) {
  Tensor t;
  t.name = r.str();
  int32_t dt = r.i32();
  if (r.ok() && !isKnownDataType(dt))
    r.fail("tensor '" + t.name + "' has unknown data type " + std::to_string(dt));
  t.dtype = static_cast<DataType>(dt);
  t.format = static_cast<Format>(r.i32());
  t.dims = wire::getDims(r);
  uint8_t k = r.u8();
  if (r.ok() && k > 2) r.fail("tensor '" + t.name + "' has unknown kind");
  t.kind = static_cast<TensorKind>(k);
  t.is_output = r.boolean();
  t.weight_offset = r.u64();
  t.weight_bytes = r.u64();
  t.storage = r.i32();
  return t;
}

void putInts(wire::Writer& w, const std::vector<int32_t>& v) {
  w.u64(v.size());
  for (int32_t x : v) w.i32(x);
}
std::vector<int32_t> getInts(wire::Reader& r) {
  std::vector<int32_t> v;
  uint64_t n = r.count(4, "index list");
  for (uint64_t i = 0; i < n && r.ok(); ++i) v.push_back(r.i32());
  return v;
}
void putI64s(wire::Writer& w, const std::vector<int64_t>& v) {
  w.u64(v.size());
  for (int64_t x : v) w.i64(x);
}
std::vector<int64_t> getI64s(wire::Reader& r) {
  std::vector<int64_t> v;
  uint64_t n = r.count(8, "dims");
  for (uint64_t i = 0; i < n && r.ok(); ++i) v.push_back(r.i64());
  return v;
}
}  // namespace

std::vector<uint8_t> serialize(const Plan& p, const std::vector<uint8_t>& weights) {
  wire::Writer w;
  w.str(p.producer);
  w.str(p.source);
  w.i32(p.backend);
  w.str(p.device);
  w.str(p.arch);
  w.i32(p.cuda_runtime);
  putInts(w, p.inputs);
  putInts(w, p.outputs);
  w.u64(p.tensors.size());
  for (const auto& t : p.tensors) putTensor(w, t);
  w.u64(p.nodes.size());
  for (const auto& n : p.nodes) {
    w.str(n.name);
    w.str(n.ns);
    w.str(n.op);
    w.str(n.version);
    w.str(n.library);
    wire::put(w, n.attrs);
    putInts(w, n.inputs);
    putInts(w, n.outputs);
    w.u64(n.size_tensors.size());
    for (const auto& s : n.size_tensors) {
      w.str(s.symbol);
      wire::put(w, s.upper);
      w.i32(s.output);
    }
    w.u64(n.assertions.size());
    for (const auto& a : n.assertions) wire::put(w, a);
    w.str(n.combo);
    w.i32(n.tactic);
    w.str(n.tactic_name);
    w.i32(n.backend);
    w.u64(n.workspace);
    w.f64(n.build_time_ms);
  }
  w.u64(p.profiles.size());
  for (const auto& prof : p.profiles) {
    w.u64(prof.size());
    for (const auto& d : prof) {
      w.str(d.input);
      putI64s(w, d.min);
      putI64s(w, d.opt);
      putI64s(w, d.max);
    }
  }
  w.u64(p.storages.size());
  for (const auto& s : p.storages) {
    w.i32(s.first);
    w.i32(s.last);
  }
  w.u64(p.input_symbols.size());
  for (const auto& [sym, pos] : p.input_symbols) {
    w.str(sym);
    w.i32(pos.first);
    w.i32(pos.second);
  }
  const std::vector<uint8_t>& meta = w.buffer();

  const uint64_t meta_offset = kHeaderSize;
  uint64_t weights_offset = meta_offset + meta.size();
  weights_offset = (weights_offset + 4095) / 4096 * 4096;  // page-aligned for mmap
  const uint64_t file_size = weights_offset + weights.size();
  std::vector<uint8_t> out(file_size, 0);
  std::memcpy(out.data() + meta_offset, meta.data(), meta.size());
  if (!weights.empty()) std::memcpy(out.data() + weights_offset, weights.data(), weights.size());
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.format_version = kFormatVersion;
  h.header_size = kHeaderSize;
  h.file_size = file_size;
  h.meta_offset = meta_offset;
  h.meta_size = meta.size();
  h.weights_offset = weights_offset;
  h.abi_version = OPFORGE_PLUGIN_ABI_VERSION;
  h.checksum = wire::checksum(out.data() + kHeaderSize, file_size - kHeaderSize);
  std::memcpy(out.data(), &h, sizeof(h));
  return out;
}

Result<Plan> deserialize(const uint8_t* data, size_t size, const std::string& what,
                         const uint8_t** weights, size_t* weights_size) {
  if (size < 8 || std::memcmp(data, kMagic, 8) != 0)
    return Status::invalid(what +
                           ": not an opforge plan file (bad magic; build one with "
                           "`opforge exec --onnx=MODEL --saveEngine=PLAN`)");
  if (size < kHeaderSize)
    return Status::corrupt(what + ": plan file truncated (" + std::to_string(size) +
                           " bytes, shorter than its 64-byte header)");
  Header h;
  std::memcpy(&h, data, sizeof(h));
  if (h.format_version != kFormatVersion)
    return Status::version(
        what + ": plan format version " + std::to_string(h.format_version) +
        "; this opforge reads version " + std::to_string(kFormatVersion) +
        (h.format_version > kFormatVersion
             ? ". The plan was written by a newer opforge: upgrade opforge or rebuild the plan."
             : ". Rebuild the plan with this opforge."));
  if (h.file_size != size)
    return Status::corrupt(what + ": plan file " +
                           (size < h.file_size ? "truncated" : "has trailing bytes") +
                           ": the header says " + std::to_string(h.file_size) +
                           " bytes, the file has " + std::to_string(size));
  if (h.header_size != kHeaderSize || h.meta_offset < kHeaderSize ||
      h.meta_offset + h.meta_size > size || h.weights_offset > size ||
      h.weights_offset < h.meta_offset + h.meta_size)
    return Status::corrupt(what + ": plan file header is inconsistent (tampered?)");
  uint64_t sum = wire::checksum(data + kHeaderSize, size - kHeaderSize);
  if (sum != h.checksum)
    return Status::corrupt(what +
                           ": plan file checksum mismatch: the file was modified or damaged "
                           "after it was written; rebuild it");
  if (h.abi_version != OPFORGE_PLUGIN_ABI_VERSION)
    return Status::version(what + ": plan built for plugin ABI version " +
                           std::to_string(h.abi_version) + "; this opforge speaks version " +
                           std::to_string(OPFORGE_PLUGIN_ABI_VERSION));
  wire::Reader r(data + h.meta_offset, h.meta_size, what + ": plan metadata");
  Plan p;
  p.producer = r.str();
  p.source = r.str();
  p.backend = r.i32();
  p.device = r.str();
  p.arch = r.str();
  p.cuda_runtime = r.i32();
  p.inputs = getInts(r);
  p.outputs = getInts(r);
  uint64_t n = r.count(40, "tensors");
  for (uint64_t i = 0; i < n && r.ok(); ++i) p.tensors.push_back(getTensor(r));
  n = r.count(60, "nodes");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    Node nd;
    nd.name = r.str();
    nd.ns = r.str();
    nd.op = r.str();
    nd.version = r.str();
    nd.library = r.str();
    nd.attrs = wire::getAttrMap(r);
    nd.inputs = getInts(r);
    nd.outputs = getInts(r);
    uint64_t m = r.count(14, "size tensors");
    for (uint64_t j = 0; j < m && r.ok(); ++j) {
      SizeTensor s;
      s.symbol = r.str();
      s.upper = wire::getDimExpr(r);
      s.output = r.i32();
      nd.size_tensors.push_back(std::move(s));
    }
    m = r.count(19, "assertions");
    for (uint64_t j = 0; j < m && r.ok(); ++j) nd.assertions.push_back(wire::getAssertion(r));
    nd.combo = r.str();
    nd.tactic = r.i32();
    nd.tactic_name = r.str();
    nd.backend = r.i32();
    nd.workspace = r.u64();
    nd.build_time_ms = r.f64();
    p.nodes.push_back(std::move(nd));
  }
  n = r.count(8, "profiles");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    std::vector<ProfileDim> prof;
    uint64_t m = r.count(32, "profile inputs");
    for (uint64_t j = 0; j < m && r.ok(); ++j) {
      ProfileDim d;
      d.input = r.str();
      d.min = getI64s(r);
      d.opt = getI64s(r);
      d.max = getI64s(r);
      prof.push_back(std::move(d));
    }
    p.profiles.push_back(std::move(prof));
  }
  n = r.count(8, "storages");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    Storage s;
    s.first = r.i32();
    s.last = r.i32();
    p.storages.push_back(s);
  }
  n = r.count(16, "input symbols");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    std::string sym = r.str();
    int32_t t = r.i32();
    int32_t a = r.i32();
    p.input_symbols.emplace_back(std::move(sym), std::make_pair(t, a));
  }
  if (!r.ok()) return r.status();
  // Cross-references: every index must be in range (a checksum collision must not crash us).
  const int nt = static_cast<int>(p.tensors.size());
  auto badIndex = [&](const std::string& where) {
    return Status::corrupt(what + ": plan metadata has an out-of-range index in " + where);
  };
  for (int32_t t : p.inputs)
    if (t < 0 || t >= nt) return badIndex("inputs");
  for (int32_t t : p.outputs)
    if (t < 0 || t >= nt) return badIndex("outputs");
  for (const auto& nd : p.nodes) {
    for (int32_t t : nd.inputs)
      if (t < -1 || t >= nt) return badIndex("node '" + nd.name + "'");
    for (int32_t t : nd.outputs)
      if (t < 0 || t >= nt) return badIndex("node '" + nd.name + "'");
    for (const auto& s : nd.size_tensors)
      if (s.output < 0 || s.output >= static_cast<int>(nd.outputs.size()))
        return badIndex("node '" + nd.name + "'");
  }
  const uint64_t wsize = size - h.weights_offset;
  for (const auto& t : p.tensors) {
    if (t.kind == TensorKind::kConstant && t.weight_offset + t.weight_bytes > wsize)
      return badIndex("weights of '" + t.name + "'");
    if (t.kind != TensorKind::kConstant &&
        (t.storage < 0 || t.storage >= static_cast<int>(p.storages.size())))
      return badIndex("storage of '" + t.name + "'");
  }
  for (const auto& [sym, pos] : p.input_symbols)
    if (pos.first < 0 || pos.first >= nt) return badIndex("input symbols");
  *weights = data + h.weights_offset;
  *weights_size = wsize;
  return p;
}

}  // namespace opforge::plan
