#include "plan.h"

#include <cstring>

#include <algorithm>
#include <climits>
#include <set>

#include "../common/checked.h"
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

std::vector<int32_t> getInts(wire::Reader& r) {
  return wire::getScalars<int32_t>(r, "index list");
}
std::vector<int64_t> getI64s(wire::Reader& r) {
  return wire::getScalars<int64_t>(r, "dims");
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
  wire::putScalars(w, p.inputs);
  wire::putScalars(w, p.outputs);
  wire::putList(w, p.tensors, putTensor);
  w.u64(p.nodes.size());
  for (const auto& n : p.nodes) {
    w.str(n.name);
    w.str(n.ns);
    w.str(n.op);
    w.str(n.version);
    w.str(n.library);
    wire::put(w, n.attrs);
    wire::putScalars(w, n.inputs);
    wire::putScalars(w, n.outputs);
    wire::putList(w, n.size_tensors, [](wire::Writer& w, const SizeRecord& s) {
      w.str(s.symbol);
      wire::put(w, s.upper);
      w.i32(s.output);
    });
    wire::putList(w, n.assertions, [](wire::Writer& w, const DimAssertion& a) { wire::put(w, a); });
    wire::putList(w, n.guards, [](wire::Writer& w, const std::pair<int32_t, bool>& g) {
      w.i32(g.first);
      w.u8(g.second ? 1 : 0);
    });
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
      wire::putScalars(w, d.min);
      wire::putScalars(w, d.opt);
      wire::putScalars(w, d.max);
    }
  }
  wire::putList(w, p.storages, [](wire::Writer& w, const Storage& s) {
    w.i32(s.first);
    w.i32(s.last);
  });
  wire::putList(w, p.input_symbols, [](wire::Writer& w, const auto& s) {
    w.str(s.first);
    w.i32(s.second.first);
    w.i32(s.second.second);
  });
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
  // Offsets and sizes are checked so that no sum wraps past 2^64.
  const auto meta_end = checked::addU(h.meta_offset, h.meta_size);
  if (h.header_size != kHeaderSize || h.meta_offset < kHeaderSize || !meta_end ||
      *meta_end > size || h.weights_offset > size || h.weights_offset < *meta_end ||
      h.weights_offset % kWeightAlign != 0)
    return Status::corrupt(what +
                           ": plan file header is inconsistent (tampered?): metadata at offset " +
                           std::to_string(h.meta_offset) + " of " + std::to_string(h.meta_size) +
                           " bytes, weights at offset " + std::to_string(h.weights_offset) +
                           ", file of " + std::to_string(size) + " bytes");
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
  p.tensors = wire::getList(r, 40, "tensors", getTensor);
  uint64_t n = r.count(60, "nodes");
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
    nd.size_tensors = wire::getList(r, 14, "size tensors", [](wire::Reader& r) {
      SizeRecord s;
      s.symbol = r.str();
      s.upper = wire::getDimExpr(r);
      s.output = r.i32();
      return s;
    });
    nd.assertions = wire::getList(r, 19, "assertions", wire::getAssertion);
    nd.guards = wire::getList(r, 5, "guards", [](wire::Reader& r) {
      const int32_t t = r.i32();
      return std::pair<int32_t, bool>(t, r.u8() != 0);
    });
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
  p.storages = wire::getList(r, 8, "storages", [](wire::Reader& r) {
    Storage s;
    s.first = r.i32();
    s.last = r.i32();
    return s;
  });
  p.input_symbols = wire::getList(r, 16, "input symbols", [](wire::Reader& r) {
    std::string sym = r.str();
    const int32_t t = r.i32();
    const int32_t a = r.i32();
    return std::make_pair(std::move(sym), std::make_pair(t, a));
  });
  if (!r.ok()) return r.status();
  if (!r.atEnd())
    return Status::corrupt(what + ": plan metadata has " +
                           std::to_string(h.meta_size - r.offset()) +
                           " unexpected bytes after its last field");
  const uint64_t wsize = size - h.weights_offset;
  OPFORGE_RETURN_IF_ERROR(validate(p, what, wsize));
  *weights = data + h.weights_offset;
  *weights_size = wsize;
  return p;
}

Status validate(const Plan& p, const std::string& what, uint64_t weights_size) {
  // The checksum is no tamper-proofing: a plan edited with its checksum recomputed is checked
  // here, field by field, as strictly as the builder would have made it; the runtime then checks
  // each node against its op (schema, attributes, shape rule) when it resolves the ops.
  auto bad = [&](const std::string& where, const std::string& why) {
    return Status::corrupt(what + ": plan " + where + ": " + why + " (tampered or damaged plan)");
  };
  const int nt = static_cast<int>(p.tensors.size());
  if (p.backend != static_cast<int32_t>(Backend::kCpu) &&
      p.backend != static_cast<int32_t>(Backend::kCuda))
    return bad("header", "unknown backend " + std::to_string(p.backend));
  for (int t = 0; t < nt; ++t) {
    const Tensor& pt = p.tensors[t];
    const std::string where = "tensor '" + pt.name + "'";
    if (pt.format != Format::kLinear && pt.format != Format::kHWC)
      return bad(where, "unknown format " + std::to_string(static_cast<int32_t>(pt.format)));
    // Every tensor of a plan the builder wrote held at most 2^40 elements at every profile point:
    // the known dims alone must keep to that (the shape rules the loader runs again rely on it).
    int64_t known = 1;
    for (size_t a = 0; a < pt.dims.size(); ++a) {
      if (!pt.dims[a].isConst()) continue;
      const int64_t d = pt.dims[a].constValue();
      if (d < 0) return bad(where, "dimension " + std::to_string(a) + " is " + std::to_string(d));
      if (__builtin_mul_overflow(known, d, &known) || known > checked::kMaxElements)
        return bad(where, "shape " + toString(pt.dims) + " has more than 2^40 elements");
    }
    if (pt.kind == TensorKind::kConstant) {
      std::vector<int64_t> dims;
      for (const auto& d : pt.dims) {
        if (!d.isConst())
          return bad(where, "a constant has the symbolic dimension " + d.toString());
        dims.push_back(d.constValue());
      }
      const auto need = checked::bytes(dims, dtypeSize(pt.dtype));
      if (!need || static_cast<uint64_t>(*need) != pt.weight_bytes)
        return bad(where, "a constant " + dtypeName(pt.dtype) + "[" + dimsToString(dims) +
                              "] needs " + (need ? std::to_string(*need) : "more than 2^63") +
                              " bytes but holds " + std::to_string(pt.weight_bytes));
      const auto end = checked::addU(pt.weight_offset, pt.weight_bytes);
      if (!end || *end > weights_size)
        return bad(where, "weights [" + std::to_string(pt.weight_offset) + ", +" +
                              std::to_string(pt.weight_bytes) +
                              ") lie outside the weights section (" + std::to_string(weights_size) +
                              " bytes)");
      if (pt.weight_offset % kWeightAlign != 0)
        return bad(where, "weights at offset " + std::to_string(pt.weight_offset) + " are not " +
                              std::to_string(kWeightAlign) + "-byte aligned");
    } else if (pt.storage < 0 || pt.storage >= static_cast<int>(p.storages.size())) {
      return bad(where, "storage " + std::to_string(pt.storage) + " is out of range (" +
                            std::to_string(p.storages.size()) + " storages)");
    }
  }
  // Inputs are the tensors of kind input, each listed once; outputs exist.
  std::vector<int> input_pos(nt, -1);
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const int32_t t = p.inputs[i];
    if (t < 0 || t >= nt) return bad("inputs", "index " + std::to_string(t) + " is out of range");
    if (p.tensors[t].kind != TensorKind::kInput)
      return bad("inputs",
                 "tensor '" + p.tensors[t].name + "' is listed as an input but is not one");
    if (input_pos[t] >= 0) return bad("inputs", "'" + p.tensors[t].name + "' is listed twice");
    input_pos[t] = static_cast<int>(i);
  }
  for (int t = 0; t < nt; ++t)
    if (p.tensors[t].kind == TensorKind::kInput && input_pos[t] < 0)
      return bad("tensor '" + p.tensors[t].name + "'", "of kind input is not a network input");
  for (int32_t t : p.outputs)
    if (t < 0 || t >= nt) return bad("outputs", "index " + std::to_string(t) + " is out of range");
  // Nodes, in execution order: inputs are constants, network inputs or earlier outputs; outputs
  // are activations written by exactly one node (never a constant: those live in the read-only
  // mapping, nor an input).
  std::vector<int> producer(nt, -1);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Node& nd = p.nodes[k];
    const std::string where = "node '" + nd.name + "'";
    if (nd.backend != static_cast<int32_t>(Backend::kCpu) &&
        nd.backend != static_cast<int32_t>(Backend::kCuda))
      return bad(where, "unknown backend " + std::to_string(nd.backend));
    for (size_t i = 0; i < nd.inputs.size(); ++i) {
      const int32_t t = nd.inputs[i];
      if (t == -1) continue;  // an omitted optional input (checked against the op's schema)
      if (t < -1 || t >= nt)
        return bad(where, "input " + std::to_string(i) + " has the index " + std::to_string(t));
      if (p.tensors[t].kind == TensorKind::kActivation && producer[t] < 0)
        return bad(where, "input " + std::to_string(i) + " ('" + p.tensors[t].name +
                              "') is not written by any earlier node");
    }
    for (const auto& [t, when] : nd.guards) {
      (void)when;
      if (t < 0 || t >= nt)
        return bad(where, "guard tensor index " + std::to_string(t) + " is out of range");
      if (p.tensors[t].dtype != DataType::kBool)
        return bad(where, "guard tensor '" + p.tensors[t].name + "' is " +
                              dtypeName(p.tensors[t].dtype) + ", not BOOL");
      if (p.tensors[t].kind == TensorKind::kActivation && producer[t] < 0)
        return bad(where,
                   "guard tensor '" + p.tensors[t].name + "' is not written by any earlier node");
    }
    for (size_t o = 0; o < nd.outputs.size(); ++o) {
      const int32_t t = nd.outputs[o];
      if (t < 0 || t >= nt)
        return bad(where, "output " + std::to_string(o) + " has the index " + std::to_string(t));
      if (p.tensors[t].kind != TensorKind::kActivation)
        return bad(where, "output " + std::to_string(o) + " ('" + p.tensors[t].name + "') is " +
                              (p.tensors[t].kind == TensorKind::kConstant ? "a constant"
                                                                          : "a network input"));
      if (producer[t] >= 0)
        return bad(where, "output " + std::to_string(o) + " ('" + p.tensors[t].name +
                              "') is also written by node '" + p.nodes[producer[t]].name + "'");
      producer[t] = static_cast<int>(k);
    }
    for (const auto& st : nd.size_tensors)
      if (st.output < 0 || st.output >= static_cast<int>(nd.outputs.size()))
        return bad(where,
                   "size tensor '" + st.symbol + "' names output " + std::to_string(st.output));
  }
  for (int32_t t : p.outputs)
    if (p.tensors[t].kind == TensorKind::kActivation && producer[t] < 0)
      return bad("outputs", "'" + p.tensors[t].name + "' is not written by any node");
  // Storage lifetimes are what the builder derives from the node order; recompute and compare.
  std::vector<Storage> life(p.storages.size(), Storage{INT32_MAX, -1});
  for (int32_t t : p.inputs) {
    auto& s = life[p.tensors[t].storage];
    s.first = -1;
    s.last = std::max(s.last, -1);
  }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    for (int32_t t : p.nodes[k].outputs) {
      auto& s = life[p.tensors[t].storage];
      s.first = std::min<int32_t>(s.first, static_cast<int32_t>(k));
      s.last = std::max<int32_t>(s.last, static_cast<int32_t>(k));
    }
    std::vector<int32_t> reads = p.nodes[k].inputs;  // a guard's condition is read too
    for (const auto& gd : p.nodes[k].guards) reads.push_back(gd.first);
    for (int32_t t : reads) {
      if (t < 0 || p.tensors[t].kind == TensorKind::kConstant) continue;
      auto& s = life[p.tensors[t].storage];
      s.last = std::max<int32_t>(s.last, static_cast<int32_t>(k));
    }
  }
  for (int32_t t : p.outputs)
    if (p.tensors[t].kind != TensorKind::kConstant) life[p.tensors[t].storage].last = INT32_MAX;
  for (size_t i = 0; i < p.storages.size(); ++i)
    if (life[i].first != p.storages[i].first || life[i].last != p.storages[i].last)
      return bad("storage " + std::to_string(i),
                 "lifetime [" + std::to_string(p.storages[i].first) + ", " +
                     std::to_string(p.storages[i].last) + "] differs from the node order's [" +
                     std::to_string(life[i].first) + ", " + std::to_string(life[i].last) + "]");
  // Profiles: at least one; each gives every input once, of its rank, min <= opt <= max, fixed
  // dimensions at their value, and shapes whose element count fits the documented maximum.
  if (p.profiles.empty()) return bad("profiles", "the plan has no optimization profile");
  for (size_t k = 0; k < p.profiles.size(); ++k) {
    const std::string where = "optimization profile " + std::to_string(k);
    if (p.profiles[k].size() != p.inputs.size())
      return bad(where, "gives " + std::to_string(p.profiles[k].size()) + " inputs; the plan has " +
                            std::to_string(p.inputs.size()));
    std::set<std::string> seen;
    for (const auto& d : p.profiles[k]) {
      int t = -1;
      for (int32_t i : p.inputs)
        if (p.tensors[i].name == d.input) t = i;
      if (t < 0 || !seen.insert(d.input).second)
        return bad(where, "names '" + d.input + "', which is not an input or is listed twice");
      const auto& dims = p.tensors[t].dims;
      for (const auto* v : {&d.min, &d.opt, &d.max})
        if (v->size() != dims.size())
          return bad(where, "input '" + d.input + "' has rank " + std::to_string(dims.size()) +
                                " but the profile gives " + dimsToString(*v));
      for (size_t a = 0; a < dims.size(); ++a) {
        if (!(0 <= d.min[a] && d.min[a] <= d.opt[a] && d.opt[a] <= d.max[a]))
          return bad(where, "input '" + d.input + "' dimension " + std::to_string(a) +
                                " has min, opt, max " + std::to_string(d.min[a]) + ", " +
                                std::to_string(d.opt[a]) + ", " + std::to_string(d.max[a]));
        if (dims[a].isConst() &&
            (d.min[a] != dims[a].constValue() || d.max[a] != dims[a].constValue()))
          return bad(where, "input '" + d.input + "' dimension " + std::to_string(a) +
                                " is fixed at " + dims[a].toString() + " but the profile gives " +
                                std::to_string(d.min[a]) + " to " + std::to_string(d.max[a]));
      }
      auto n = checked::numel(d.max);
      if (!n || *n > checked::kMaxElements)
        return bad(where, "input '" + d.input + "' max shape " + dimsToString(d.max) +
                              " has more than 2^40 elements");
    }
  }
  // Input symbols: each names a dynamic dimension of a network input, by tensor and axis.
  for (const auto& [sym, pos] : p.input_symbols) {
    const std::string where = "input symbol '" + sym + "'";
    if (pos.first < 0 || pos.first >= nt || p.tensors[pos.first].kind != TensorKind::kInput)
      return bad(where, "names tensor " + std::to_string(pos.first) + ", which is not an input");
    const auto& dims = p.tensors[pos.first].dims;
    if (pos.second < 0 || pos.second >= static_cast<int32_t>(dims.size()))
      return bad(where, "names axis " + std::to_string(pos.second) + " of '" +
                            p.tensors[pos.first].name + "' (rank " + std::to_string(dims.size()) +
                            ")");
    const DimExpr& d = dims[pos.second];
    if (d.kind() != DimExpr::Kind::kSymbol || d.symbolName() != sym)
      return bad(where, "names axis " + std::to_string(pos.second) + " of '" +
                            p.tensors[pos.first].name + "', which is " + d.toString());
  }
  for (int32_t t : p.inputs) {
    const auto& dims = p.tensors[t].dims;
    for (size_t a = 0; a < dims.size(); ++a) {
      if (dims[a].isConst()) continue;
      bool bound = false;
      for (const auto& [sym, pos] : p.input_symbols)
        bound |= pos.first == t && pos.second == static_cast<int32_t>(a);
      if (!bound || dims[a].kind() != DimExpr::Kind::kSymbol)
        return bad("tensor '" + p.tensors[t].name + "'", "dimension " + std::to_string(a) + " (" +
                                                             dims[a].toString() +
                                                             ") is not a bound input symbol");
    }
  }
  return Status::ok();
}

}  // namespace opforge::plan
