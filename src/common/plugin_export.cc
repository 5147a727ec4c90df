// The library side of the plugin ABI: wraps the OpDefs of one shared object in C entry points.
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>

#include "opforge/op.h"
#include "opforge/plugin_export.h"
#include "plugin_table.h"
#include "wire.h"

namespace opforge::detail {
std::deque<OpDef>& finalizedOps(std::string& error);

namespace {

void writeError(char* dst, uint64_t cap, const std::string& msg) {
  if (!dst || cap == 0) return;
  size_t n = std::min<size_t>(msg.size(), cap - 1);
  std::memcpy(dst, msg.data(), n);
  dst[n] = '\0';
}

OpforgeBuffer toBuffer(const std::vector<uint8_t>& v) {
  OpforgeBuffer b{nullptr, v.size()};
  b.data = static_cast<uint8_t*>(std::malloc(v.empty() ? 1 : v.size()));
  if (b.data) std::memcpy(b.data, v.data(), v.size());
  return b;
}

void freeBuffer(OpforgeBuffer* b) {
  if (!b) return;
  std::free(b->data);
  b->data = nullptr;
  b->size = 0;
}

class QueryShapeContext final : public ShapeContext {
 public:
  explicit QueryShapeContext(wire::ShapeQuery query) : q(std::move(query)) {}
  wire::ShapeQuery q;  // node, op key, symbol prefix, attributes, inputs
  std::vector<SizeTensor> size_tensors;
  std::vector<std::pair<int, std::vector<DimExpr>>> values;
  std::vector<DimAssertion> asserts;

  int numInputs() const override { return static_cast<int>(q.inputs.size()); }
  bool hasInput(int i) const override { return i >= 0 && i < numInputs() && q.inputs[i].present; }
  SymDesc input(int i) const override {
    if (!hasInput(i)) return {};
    SymDesc d = q.inputs[i].desc;
    d.source = i;
    return d;
  }
  const AttrMap& attrs() const override { return q.attrs; }
  std::optional<std::vector<DimExpr>> value(int i) const override {
    return hasInput(i) ? q.inputs[i].value : std::nullopt;
  }
  const TensorValue* constant(int i) const override {
    return hasInput(i) ? q.inputs[i].constant : nullptr;
  }
  SizeTensor sizeTensor(DimExpr opt, DimExpr upper, DataType dtype) override {
    SizeTensor s;
    s.index = static_cast<int>(size_tensors.size());
    s.symbol = DimExpr::symbol(q.symbol_prefix + std::to_string(s.index));
    s.opt = std::move(opt);
    s.upper = std::move(upper);
    s.dtype = dtype;
    size_tensors.push_back(s);
    return s;
  }
  void setValue(int out, std::vector<DimExpr> v) override {
    values.emplace_back(out, std::move(v));
  }
  void require(DimExpr lhs, DimAssertion::Op op, DimExpr rhs, std::string message) override {
    asserts.push_back({std::move(lhs), op, std::move(rhs), std::move(message)});
  }
  const std::string& nodeName() const override { return q.node; }
  const std::string& opKey() const override { return q.key; }
};

struct Instance {
  const OpDef* def;
  AttrMap attrs;
};

class CallContext final : public KernelContext {
 public:
  CallContext(const Instance& inst, const OpforgeKernelArgs& a) : inst_(inst), a_(a) {}
  const AttrMap& attrs() const override { return inst_.attrs; }
  int32_t tactic() const override { return a_.tactic; }
  void* stream() const override { return a_.stream; }
  void* workspace() const override { return a_.workspace; }
  size_t workspaceSize() const override { return a_.workspace_size; }
  DeviceErrorRecord* errorRecord() const override {
    // An engine older than the field passes a shorter struct: no record.
    if (!OPFORGE_KERNEL_ARGS_HAS(&a_, error_record)) return nullptr;
    return static_cast<DeviceErrorRecord*>(a_.error_record);
  }

 private:
  const Instance& inst_;
  const OpforgeKernelArgs& a_;
};

TensorDesc toDesc(const OpforgeTensor& t) {
  TensorDesc d;
  d.dtype = static_cast<DataType>(t.dtype);
  d.format = static_cast<Format>(t.format);
  d.dims.assign(t.dims, t.dims + t.rank);
  return d;
}

int32_t inferImpl(const OpforgeOp* op, const uint8_t* q, uint64_t n, OpforgeBuffer* answer,
                  char* err, uint64_t cap) {
  try {
    const auto* def = static_cast<const OpDef*>(op->impl);
    wire::Reader r(q, n, "shape query");
    QueryShapeContext c(wire::getShapeQuery(r));
    if (!r.ok()) {
      writeError(err, cap, r.status().message());
      return static_cast<int32_t>(StatusCode::kCorrupt);
    }
    if (!def->shapeFn()) {
      writeError(err, cap, c.error("the op defines no shape rule").message());
      return static_cast<int32_t>(StatusCode::kInternal);
    }
    auto res = def->shapeFn()(c);
    if (!res) {
      writeError(err, cap, res.status().message());
      return static_cast<int32_t>(res.status().code());
    }
    InferResult a;
    a.outputs = std::move(*res);
    for (const auto& s : c.size_tensors)
      a.size_tensors.push_back({s.symbol.symbolName(), s.opt, s.upper, s.dtype, -1});
    a.values = std::move(c.values);
    a.assertions = std::move(c.asserts);
    wire::Writer w;
    wire::put(w, a);
    *answer = toBuffer(w.buffer());
    return OPFORGE_ABI_OK;
  } catch (const std::exception& e) {
    writeError(err, cap, std::string("exception in shape rule: ") + e.what());
  } catch (...) {
    writeError(err, cap, "unknown exception in shape rule");
  }
  return static_cast<int32_t>(StatusCode::kInternal);
}

int32_t createImpl(const OpforgeOp* op, const uint8_t* a, uint64_t n, void** instance, char* err,
                   uint64_t cap) {
  try {
    const auto* def = static_cast<const OpDef*>(op->impl);
    wire::Reader r(a, n, "attributes");
    AttrMap attrs = wire::getAttrMap(r);
    if (!r.ok()) {
      writeError(err, cap, r.status().message());
      return static_cast<int32_t>(StatusCode::kCorrupt);
    }
    if (def->checkFn()) {
      Status st = def->checkFn()(attrs);
      if (!st) {
        writeError(err, cap, st.message());
        return static_cast<int32_t>(st.code());
      }
    }
    *instance = new Instance{def, std::move(attrs)};
    return OPFORGE_ABI_OK;
  } catch (const std::exception& e) {
    writeError(err, cap, std::string("exception creating the op: ") + e.what());
  }
  return static_cast<int32_t>(StatusCode::kInternal);
}

void destroyImpl(void* instance) {
  delete static_cast<Instance*>(instance);
}

int32_t queryTacticImpl(void* instance, int32_t tactic, const OpforgeTensor* in, int32_t ni,
                        const OpforgeTensor* out, int32_t no, uint64_t* ws) {
  try {
    auto* inst = static_cast<Instance*>(instance);
    const TacticDef* t = inst->def->findTactic(tactic);
    if (!t) return 0;
    std::vector<TensorDesc> ins, outs;
    for (int i = 0; i < ni; ++i) ins.push_back(toDesc(in[i]));
    for (int i = 0; i < no; ++i) outs.push_back(toDesc(out[i]));
    if (t->applies && !t->applies(inst->attrs, ins, outs)) return 0;
    if (ws) *ws = t->workspace ? t->workspace(inst->attrs, ins, outs) : 0;
    return 1;
  } catch (...) {
    return -1;
  }
}

int32_t runImpl(void* instance, const OpforgeKernelArgs* a) {
  try {
    auto* inst = static_cast<Instance*>(instance);
    const TacticDef* t = inst->def->findTactic(a->tactic);
    if (!t) {
      writeError(a->error, a->error_capacity,
                 "op " + inst->def->schema().key() + " has no tactic " + std::to_string(a->tactic));
      return static_cast<int32_t>(StatusCode::kNotFound);
    }
    std::vector<Tensor> ins(a->num_inputs), outs(a->num_outputs);
    for (int i = 0; i < a->num_inputs; ++i)
      ins[i] =
          Tensor{toDesc(a->inputs[i]), a->inputs[i].data, static_cast<Device>(a->inputs[i].device)};
    for (int i = 0; i < a->num_outputs; ++i)
      outs[i] = Tensor{toDesc(a->outputs[i]), a->outputs[i].data,
                       static_cast<Device>(a->outputs[i].device)};
    CallContext ctx(*inst, *a);
    Status st = t->fn(ctx, ins, outs);
    if (!st) {
      writeError(a->error, a->error_capacity, st.message());
      return static_cast<int32_t>(st.code() == StatusCode::kOk ? StatusCode::kInternal : st.code());
    }
    return OPFORGE_ABI_OK;
  } catch (const std::exception& e) {
    writeError(a->error, a->error_capacity, std::string("exception in kernel: ") + e.what());
  } catch (...) {
    writeError(a->error, a->error_capacity, "unknown exception in kernel");
  }
  return static_cast<int32_t>(StatusCode::kInternal);
}

OpTable& buildTable(const char* name, const char* version) {
  static OpTable t;
  static std::once_flag once;
  std::call_once(once, [&] {
    t.name = name;
    t.version = version;
    std::string error;
    std::vector<const OpDef*> defs;
    for (auto& op : finalizedOps(error)) defs.push_back(&op);
    fillTable(t, defs, std::move(error));
  });
  return t;
}

}  // namespace

void fillTable(OpTable& t, const std::vector<const OpDef*>& defs, std::string error) {
  std::vector<std::string> keys;
  for (const OpDef* def : defs) {
    const OpDef& op = *def;
    const OpSchema& s = op.schema();
    std::string kv = s.key() + " v" + s.version;
    for (const auto& k : keys)
      if (k == kv && error.empty())
        error = "op " + kv + " is defined twice in library '" + t.name + "'";
    keys.push_back(kv);
    if (!op.findTactic(0) && error.empty())
      error = "op " + kv + " has no CPU reference kernel (.cpu(...) is mandatory)";
    if (!op.shapeFn() && error.empty()) error = "op " + kv + " has no shape rule";
    bool variadic = false;
    for (const auto& in : s.inputs) variadic |= in.variadic;
    if (!variadic) {
      for (const auto& c : s.combos) {
        auto r = expandCombo(c, static_cast<int>(s.inputs.size() + s.outputs.size()));
        if (!r && error.empty()) error = "op " + kv + ": " + r.status().message();
      }
    }
  }
  t.error = error;
  for (const OpDef* def : defs) {
    const OpSchema& s = def->schema();
    wire::Writer w;
    wire::put(w, s);
    t.blobs.push_back(w.take());
    t.strings.push_back(s.key());
    const char* key = t.strings.back().c_str();
    t.strings.push_back(s.version);
    const char* ver = t.strings.back().c_str();
    OpforgeOp op{};
    op.struct_size = sizeof(OpforgeOp);
    op.impl = def;
    op.key = key;
    op.version = ver;
    op.schema = t.blobs.back().data();
    op.schema_size = t.blobs.back().size();
    op.infer = &inferImpl;
    op.create = &createImpl;
    op.destroy = &destroyImpl;
    op.query_tactic = &queryTacticImpl;
    op.run = &runImpl;
    t.ops.push_back(op);
  }
  t.lib.struct_size = sizeof(OpforgeLibrary);
  t.lib.abi_version = OPFORGE_PLUGIN_ABI_VERSION;
  t.lib.name = t.name.c_str();
  t.lib.version = t.version.c_str();
  t.lib.num_ops = static_cast<int32_t>(t.ops.size());
  t.lib.ops = t.ops.data();
  t.lib.free_buffer = &freeBuffer;
  t.lib.error = t.error.empty() ? nullptr : t.error.c_str();
}

std::unique_ptr<OpTable> makeTable(std::string name, std::string version, std::vector<OpDef> ops) {
  auto t = std::make_unique<OpTable>();
  t->name = std::move(name);
  t->version = std::move(version);
  std::vector<const OpDef*> defs;
  for (auto& op : ops) defs.push_back(&t->owned.emplace_back(std::move(op)));
  fillTable(*t, defs);
  return t;
}

const OpforgeLibrary* libraryTable(const char* name, const char* version,
                                   uint32_t engine_abi_version) {
  (void)engine_abi_version;  // the engine compares versions; the table is the same either way
  return &buildTable(name, version).lib;
}

}  // namespace opforge::detail
