#include "opforge/runtime.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "../builder/plan.h"

namespace opforge {

namespace {

constexpr size_t kArenaAlign = 256;

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

class AlignedBuffer {
 public:
  ~AlignedBuffer() { std::free(p_); }
  bool reserve(size_t n) {
    if (n <= cap_) return true;
    void* q = nullptr;
    if (::posix_memalign(&q, kArenaAlign, std::max<size_t>(n, 1)) != 0) return false;
    std::free(p_);
    p_ = static_cast<uint8_t*>(q);
    cap_ = n;
    return true;
  }
  uint8_t* data() const { return p_; }
  size_t capacity() const { return cap_; }

 private:
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace

struct Engine::Impl {
  std::string name;
  std::shared_ptr<Registry> registry;
  void* map = nullptr;
  size_t map_size = 0;
  std::vector<uint8_t> owned;
  const uint8_t* weights = nullptr;
  size_t weights_size = 0;
  plan::Plan plan;
  std::vector<const RegisteredOp*> ops;
  std::vector<std::shared_ptr<KernelInstance>> instances;
  std::map<std::string, int> tensor_by_name;
  std::vector<bool> has_size_symbol;  // per tensor: dims depend on a data-dependent size

  ~Impl() {
    instances.clear();
    if (map) ::munmap(map, map_size);
  }
};

Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

Result<std::shared_ptr<Engine>> Engine::finishLoad(std::shared_ptr<Engine> e, const uint8_t* data,
                                                   size_t size) {
  Engine::Impl& im = *e->impl_;
  OPFORGE_ASSIGN_OR_RETURN(im.plan, plan::deserialize(data, size, im.name, &im.weights, &im.weights_size));
  const plan::Plan& p = im.plan;
  // Resolve every op; report all missing ones at once.
  std::vector<std::string> missing;
  std::set<std::string> missing_libs;
  for (const auto& n : p.nodes) {
    const RegisteredOp* op = im.registry->find(n.ns, n.op, n.version);
    im.ops.push_back(op);
    if (!op) {
      std::string key = n.ns.empty() ? n.op : n.ns + "::" + n.op;
      missing.push_back("  " + key + " v" + n.version + " (node '" + n.name + "', from " + n.library +
                        " when the plan was built)");
      missing_libs.insert(n.library);
    }
  }
  if (!missing.empty()) {
    std::string msg = im.name + ": the plan needs " + std::to_string(missing.size()) +
                      " op(s) that no loaded library provides:\n";
    for (const auto& m : missing) msg += m + "\n";
    msg += "loaded libraries: " + im.registry->librariesSummary() + "\n";
    std::string libs;
    for (const auto& l : missing_libs) libs += (libs.empty() ? "" : ", ") + l;
    msg += "Load the library that defines them (" + libs + ") with --plugins=PATH, e.g. --plugins=build/lib/" +
           *missing_libs.begin() + ".";
    return Status::notFound(msg);
  }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    auto attrs = im.ops[k]->validateAttrs(n.name, n.attrs);
    if (!attrs)
      return attrs.status().withContext(im.name + ": the op's definition changed since the plan was built");
    OPFORGE_ASSIGN_OR_RETURN(auto inst, im.ops[k]->instantiate(n.name, *attrs));
    im.instances.push_back(std::move(inst));
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) im.tensor_by_name[p.tensors[t].name] = static_cast<int>(t);
  std::set<std::string> size_symbols;
  for (const auto& n : p.nodes)
    for (const auto& s : n.size_tensors) size_symbols.insert(s.symbol);
  im.has_size_symbol.assign(p.tensors.size(), false);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    for (const auto& d : p.tensors[t].dims)
      for (const auto& s : size_symbols) im.has_size_symbol[t] = im.has_size_symbol[t] || d.dependsOn(s);
  auto info = [&](int32_t t, bool is_input) {
    IOTensorInfo io;
    const auto& pt = p.tensors[t];
    io.name = pt.name;
    io.is_input = is_input;
    io.dtype = pt.dtype;
    io.format = pt.format;
    io.shape = toString(pt.dims);
    for (const auto& d : pt.dims) io.dims.push_back(d.isConst() ? d.constValue() : -1);
    return io;
  };
  for (int32_t t : p.inputs) e->io_.push_back(info(t, true));
  for (int32_t t : p.outputs) e->io_.push_back(info(t, false));
  e->name_ = im.name;
  return e;
}

Result<std::shared_ptr<Engine>> Engine::loadFile(const std::string& path,
                                                 std::shared_ptr<Registry> registry) {
  std::shared_ptr<Engine> e(new Engine());
  Impl& im = *e->impl_;
  im.name = path;
  im.registry = registry ? std::move(registry) : Registry::global();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return Status::notFound(path + ": cannot open plan file: " + std::strerror(errno));
  struct stat sb;
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    ::close(fd);
    return Status::invalid(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(sb.st_size);
  if (size == 0) {
    ::close(fd);
    return Status::corrupt(path + ": plan file is empty");
  }
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return Status::io(path + ": cannot map plan file: " + std::strerror(errno));
  im.map = m;
  im.map_size = size;
  return finishLoad(std::move(e), static_cast<const uint8_t*>(m), size);
}

Result<std::shared_ptr<Engine>> Engine::loadMemory(std::vector<uint8_t> bytes, const std::string& name,
                                                   std::shared_ptr<Registry> registry) {
  std::shared_ptr<Engine> e(new Engine());
  Impl& im = *e->impl_;
  im.name = name;
  im.registry = registry ? std::move(registry) : Registry::global();
  // Keep the bytes 64-byte aligned relative to their start, as in a mapped file.
  im.owned = std::move(bytes);
  return finishLoad(std::move(e), im.owned.data(), im.owned.size());
}

int Engine::numProfiles() const { return static_cast<int>(impl_->plan.profiles.size()); }
Backend Engine::backend() const { return static_cast<Backend>(impl_->plan.backend); }

Result<std::vector<std::vector<int64_t>>> Engine::profileShapes(int profile, const std::string& input) const {
  if (profile < 0 || profile >= numProfiles())
    return Status::outOfRange("optimization profile " + std::to_string(profile) + " does not exist (the plan has " +
                              std::to_string(numProfiles()) + ")");
  for (const auto& d : impl_->plan.profiles[profile])
    if (d.input == input) return std::vector<std::vector<int64_t>>{d.min, d.opt, d.max};
  return Status::notFound("'" + input + "' is not an input of " + name_);
}

uint64_t Engine::weightBytes() const {
  uint64_t n = 0;
  for (const auto& t : impl_->plan.tensors)
    if (t.kind == plan::TensorKind::kConstant) n += t.weight_bytes;
  return n;
}

std::vector<LayerInfo> Engine::layers() const {
  const plan::Plan& p = impl_->plan;
  std::vector<LayerInfo> out;
  auto tdesc = [&](int32_t t) {
    if (t < 0) return std::string("(omitted)");
    const auto& pt = p.tensors[t];
    std::string s = pt.name + " " + dtypeName(pt.dtype) + toString(pt.dims);
    if (pt.format != Format::kLinear) s += ":" + formatName(pt.format);
    return s;
  };
  for (const auto& n : p.nodes) {
    LayerInfo l;
    l.name = n.name;
    l.op = (n.ns.empty() ? n.op : n.ns + "::" + n.op) + " v" + n.version;
    l.combo = n.combo;
    l.tactic = std::to_string(n.tactic) + " (" + n.tactic_name + ")";
    l.library = n.library;
    for (int32_t t : n.inputs) l.inputs.push_back(tdesc(t));
    for (int32_t t : n.outputs) l.outputs.push_back(tdesc(t));
    l.workspace = n.workspace;
    l.build_time_ms = n.build_time_ms;
    out.push_back(std::move(l));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Execution context
// ---------------------------------------------------------------------------------------------

struct ExecutionContext::Impl {
  std::shared_ptr<const Engine> engine;
  const Engine::Impl* e = nullptr;
  int profile = 0;
  std::map<int32_t, std::vector<int64_t>> input_shapes;  // tensor id -> dims
  std::set<int32_t> inputs_written;
  bool dirty = true;
  bool executed = false;
  std::map<std::string, int64_t> bindings;
  std::vector<std::vector<int64_t>> alloc_dims;  // per tensor, sizes used for allocation
  std::vector<std::vector<int64_t>> dims;        // per tensor, real dims (after its producer ran)
  std::vector<size_t> storage_offset;
  AlignedBuffer arena;
  size_t arena_bytes = 0;
  AlignedBuffer workspace;
  bool profiling = false;
  std::vector<LayerTime> times;

  DimExpr::Lookup lookup() const {
    return [this](const std::string& s) -> std::optional<int64_t> {
      auto it = bindings.find(s);
      if (it == bindings.end()) return std::nullopt;
      return it->second;
    };
  }
  const plan::Plan& plan() const { return e->plan; }
  Status prepare();
  void bindInputs();
  void* tensorData(int32_t t) const {
    const auto& pt = plan().tensors[t];
    if (pt.kind == plan::TensorKind::kConstant) return const_cast<uint8_t*>(e->weights + pt.weight_offset);
    return arena.data() + storage_offset[pt.storage];
  }
  TensorDesc desc(int32_t t, const std::vector<int64_t>& d) const {
    const auto& pt = plan().tensors[t];
    return TensorDesc{pt.dtype, d, pt.format};
  }
};

ExecutionContext::ExecutionContext() : impl_(std::make_unique<Impl>()) {}
ExecutionContext::~ExecutionContext() = default;

Result<std::unique_ptr<ExecutionContext>> Engine::createExecutionContext() const {
  std::unique_ptr<ExecutionContext> c(new ExecutionContext());
  c->impl_->engine = shared_from_this();
  c->impl_->e = impl_.get();
  for (int32_t t : impl_->plan.inputs) {
    const auto& pt = impl_->plan.tensors[t];
    bool dyn = false;
    std::vector<int64_t> d;
    for (const auto& x : pt.dims) {
      dyn |= !x.isConst();
      d.push_back(x.constValue());
    }
    if (!dyn) c->impl_->input_shapes[t] = d;
  }
  return c;
}

Status ExecutionContext::setOptimizationProfile(int index) {
  if (index < 0 || index >= static_cast<int>(impl_->e->plan.profiles.size()))
    return Status::outOfRange("optimization profile " + std::to_string(index) + " does not exist (the plan has " +
                              std::to_string(impl_->e->plan.profiles.size()) + ")");
  impl_->profile = index;
  impl_->dirty = true;
  return Status::ok();
}

int ExecutionContext::optimizationProfile() const { return impl_->profile; }

Status ExecutionContext::setInputShape(const std::string& name, const std::vector<int64_t>& dims) {
  const plan::Plan& p = impl_->plan();
  auto it = impl_->e->tensor_by_name.find(name);
  if (it == impl_->e->tensor_by_name.end() || p.tensors[it->second].kind != plan::TensorKind::kInput) {
    std::string names;
    for (int32_t t : p.inputs) names += (names.empty() ? "" : ", ") + p.tensors[t].name;
    return Status::notFound("'" + name + "' is not an input of " + impl_->e->name + " (inputs: " + names + ")");
  }
  const int32_t t = it->second;
  const auto& pt = p.tensors[t];
  if (dims.size() != pt.dims.size())
    return Status::invalid("input '" + name + "' has rank " + std::to_string(pt.dims.size()) + " " +
                           toString(pt.dims) + "; got shape " + dimsToString(dims) + " (rank " +
                           std::to_string(dims.size()) + ")");
  const plan::ProfileDim* range = nullptr;
  for (const auto& d : p.profiles[impl_->profile])
    if (d.input == name) range = &d;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (pt.dims[a].isConst()) {
      if (dims[a] != pt.dims[a].constValue())
        return Status::invalid("input '" + name + "' dimension " + std::to_string(a) + " is fixed at " +
                               std::to_string(pt.dims[a].constValue()) + "; got " + std::to_string(dims[a]));
    } else if (range && (dims[a] < range->min[a] || dims[a] > range->max[a])) {
      return Status::outOfRange("input '" + name + "' shape " + dimsToString(dims) + ": dimension " +
                                std::to_string(a) + " = " + std::to_string(dims[a]) +
                                " is outside optimization profile " + std::to_string(impl_->profile) + " [" +
                                std::to_string(range->min[a]) + ", " + std::to_string(range->max[a]) +
                                "] (min " + dimsToString(range->min) + ", max " + dimsToString(range->max) + ")");
    }
  }
  auto& cur = impl_->input_shapes[t];
  if (cur != dims) {
    cur = dims;
    impl_->dirty = true;
    impl_->inputs_written.erase(t);
  }
  return Status::ok();
}

void ExecutionContext::Impl::bindInputs() {
  bindings.clear();
  for (const auto& [sym, pos] : plan().input_symbols) bindings[sym] = input_shapes.at(pos.first)[pos.second];
}

Status ExecutionContext::Impl::prepare() {
  if (!dirty) return Status::ok();
  const plan::Plan& p = plan();
  for (int32_t t : p.inputs)
    if (!input_shapes.count(t))
      return Status::invalid("input '" + p.tensors[t].name + "' " + toString(p.tensors[t].dims) +
                             " has dynamic dimensions and no shape yet (setInputShape; CLI: --shapes=" +
                             p.tensors[t].name + ":...)");
  bindInputs();
  // Data-dependent sizes: allocate for their upper bound.
  for (const auto& n : p.nodes)
    for (const auto& s : n.size_tensors) {
      auto v = s.upper.eval(lookup());
      if (!v) return v.status().withContext("node '" + n.name + "': size tensor upper bound");
      bindings[s.symbol] = *v;
    }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    for (const auto& a : n.assertions) {
      bool depends = false;
      for (const auto& s : n.size_tensors) depends |= a.lhs.dependsOn(s.symbol) || a.rhs.dependsOn(s.symbol);
      if (depends) continue;
      auto l = a.lhs.eval(lookup());
      auto r = a.rhs.eval(lookup());
      if (l && r && !a.holds(*l, *r))
        return Status::invalid("node '" + n.name + "': " + a.message + " (" + std::to_string(*l) + " vs " +
                               std::to_string(*r) + ")");
    }
  }
  alloc_dims.assign(p.tensors.size(), {});
  std::vector<size_t> storage_bytes(p.storages.size(), 0);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& pt = p.tensors[t];
    auto d = evalDims(pt.dims, lookup());
    if (!d) return d.status().withContext("tensor '" + pt.name + "'");
    for (int64_t x : *d)
      if (x < 0)
        return Status::invalid("tensor '" + pt.name + "' " + toString(pt.dims) + " gets a negative dimension (" +
                               dimsToString(*d) + ") at these input shapes");
    alloc_dims[t] = *d;
    if (pt.kind == plan::TensorKind::kConstant) continue;
    size_t bytes = TensorDesc{pt.dtype, *d, pt.format}.bytes();
    storage_bytes[pt.storage] = std::max(storage_bytes[pt.storage], alignUp(std::max<size_t>(bytes, 1), kArenaAlign));
  }
  // Greedy offset assignment: largest first, lowest offset that overlaps no storage alive at
  // the same time.
  std::vector<size_t> idx(p.storages.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return storage_bytes[a] > storage_bytes[b]; });
  storage_offset.assign(p.storages.size(), 0);
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t s : idx) {
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t q : placed) {
      bool overlap = !(p.storages[q].last < p.storages[s].first || p.storages[s].last < p.storages[q].first);
      if (overlap) busy.emplace_back(storage_offset[q], storage_offset[q] + storage_bytes[q]);
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, e2] : busy) {
      if (off + storage_bytes[s] <= b) break;
      off = std::max(off, e2);
    }
    storage_offset[s] = off;
    total = std::max(total, off + storage_bytes[s]);
    placed.push_back(s);
  }
  if (!arena.reserve(total))
    return Status::runtime("cannot allocate " + std::to_string(total) + " bytes of activation memory");
  arena_bytes = total;
  dirty = false;
  executed = false;
  return Status::ok();
}

Status ExecutionContext::setInput(const std::string& name, const void* data, size_t bytes) {
  const plan::Plan& p = impl_->plan();
  auto it = impl_->e->tensor_by_name.find(name);
  if (it == impl_->e->tensor_by_name.end() || p.tensors[it->second].kind != plan::TensorKind::kInput)
    return Status::notFound("'" + name + "' is not an input of " + impl_->e->name);
  OPFORGE_RETURN_IF_ERROR(impl_->prepare());
  const int32_t t = it->second;
  TensorDesc d = impl_->desc(t, impl_->alloc_dims[t]);
  if (bytes != d.bytes())
    return Status::invalid("input '" + name + "' is " + describe(d) + " = " + std::to_string(d.bytes()) +
                           " bytes; got " + std::to_string(bytes) + " bytes");
  if (bytes) std::memcpy(impl_->tensorData(t), data, bytes);
  impl_->inputs_written.insert(t);
  return Status::ok();
}

Status ExecutionContext::execute() {
  Impl& c = *impl_;
  OPFORGE_RETURN_IF_ERROR(c.prepare());
  const plan::Plan& p = c.plan();
  for (int32_t t : p.inputs)
    if (!c.inputs_written.count(t))
      return Status::invalid("input '" + p.tensors[t].name + "' has no data (setInput; the CLI fills missing inputs with random data)");
  c.bindInputs();
  c.dims = c.alloc_dims;
  // Tensors whose size depends on data are unknown until their producer runs.
  c.times.clear();
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& a : n.assertions) {
      auto l = a.lhs.eval(c.lookup());
      auto r = a.rhs.eval(c.lookup());
      if (!l || !r) continue;  // involves this node's own data-dependent size
      if (!a.holds(*l, *r))
        return Status::invalid("node '" + n.name + "': " + a.message + " (" + std::to_string(*l) + " vs " +
                               std::to_string(*r) + ")");
    }
    std::vector<Tensor> ins, outs;
    std::vector<TensorDesc> in_d, out_d;
    for (int32_t t : n.inputs) {
      if (t < 0) {
        ins.push_back(Tensor{});
        in_d.push_back(TensorDesc{});
        continue;
      }
      ins.push_back(Tensor{c.desc(t, c.dims[t]), c.tensorData(t), Device::kCpu});
      in_d.push_back(ins.back().desc);
    }
    for (int32_t t : n.outputs) {
      // Outputs whose dims name this node's size symbols get their upper bound for the kernel.
      std::map<std::string, int64_t> saved;
      auto d = evalDims(p.tensors[t].dims, [&](const std::string& s) -> std::optional<int64_t> {
        auto it = c.bindings.find(s);
        if (it != c.bindings.end()) return it->second;
        for (const auto& st : n.size_tensors)
          if (st.symbol == s) {
            auto u = st.upper.eval(c.lookup());
            if (u) return *u;
          }
        return std::nullopt;
      });
      if (!d) return d.status().withContext("node '" + n.name + "', output '" + p.tensors[t].name + "'");
      c.dims[t] = *d;
      outs.push_back(Tensor{c.desc(t, *d), c.tensorData(t), Device::kCpu});
      out_d.push_back(outs.back().desc);
    }
    size_t ws = 0;
    const KernelInstance& inst = *c.e->instances[k];
    if (!inst.tacticApplies(n.tactic, in_d, out_d, &ws))
      return Status::runtime("node '" + n.name + "': tactic " + std::to_string(n.tactic) + " (" + n.tactic_name +
                             ") does not apply to these shapes");
    if (ws && !c.workspace.reserve(ws)) return Status::runtime("cannot allocate " + std::to_string(ws) + " bytes of workspace");
    Status st = inst.run(n.tactic, ins, outs, c.workspace.data(), ws, nullptr);
    if (!st)
      return Status(st.code(), "node '" + n.name + "' (" + (n.ns.empty() ? n.op : n.ns + "::" + n.op) + ", tactic " +
                                   std::to_string(n.tactic) + " " + n.tactic_name + "): " + st.message());
    for (const auto& s : n.size_tensors) {
      const int32_t t = n.outputs[s.output];
      const Tensor& out = outs[s.output];
      int64_t v = out.desc.dtype == DataType::kInt64 ? *static_cast<const int64_t*>(out.data)
                                                      : *static_cast<const int32_t*>(out.data);
      auto upper = s.upper.eval(c.lookup());
      if (!upper) return upper.status();
      if (v < 0 || v > *upper)
        return Status::runtime("node '" + n.name + "' reported data-dependent size " + std::to_string(v) +
                               " outside [0, " + std::to_string(*upper) + "] (its declared upper bound)");
      (void)t;
      c.bindings[s.symbol] = v;
    }
    if (!n.size_tensors.empty()) {
      // Real shapes of this node's outputs now that their sizes are known.
      for (int32_t t : n.outputs) {
        auto d = evalDims(p.tensors[t].dims, c.lookup());
        if (!d) return d.status();
        c.dims[t] = *d;
      }
    }
    if (c.profiling) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      c.times.push_back({n.name, ms});
    }
  }
  // Tensors downstream of data-dependent sizes: recompute with the real sizes (producers did).
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (c.e->has_size_symbol[t]) {
      auto d = evalDims(p.tensors[t].dims, c.lookup());
      if (d) c.dims[t] = *d;
    }
  c.executed = true;
  return Status::ok();
}

Result<std::vector<int64_t>> ExecutionContext::shape(const std::string& name) const {
  const Impl& c = *impl_;
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end()) return Status::notFound("no tensor named '" + name + "' in " + c.e->name);
  const int32_t t = it->second;
  if (c.executed) return c.dims[t];
  if (c.dirty) {
    OPFORGE_RETURN_IF_ERROR(const_cast<Impl&>(c).prepare());
  }
  if (c.e->has_size_symbol[t])
    return Status::invalid("the shape of '" + name + "' depends on data; it is known after execute()");
  return c.alloc_dims[t];
}

Result<Tensor> ExecutionContext::output(const std::string& name) const {
  const Impl& c = *impl_;
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end()) return Status::notFound("no tensor named '" + name + "' in " + c.e->name);
  const int32_t t = it->second;
  const auto& pt = c.plan().tensors[t];
  if (!pt.is_output && pt.kind != plan::TensorKind::kInput)
    return Status::invalid("'" + name + "' is not a network output (intermediate tensors are not kept)");
  if (!c.executed) return Status::invalid("no outputs yet: call execute() first");
  return Tensor{c.desc(t, c.dims[t]), c.tensorData(t), Device::kCpu};
}

void ExecutionContext::setProfiling(bool on) { impl_->profiling = on; }
const std::vector<LayerTime>& ExecutionContext::layerTimes() const { return impl_->times; }
uint64_t ExecutionContext::activationBytes() const { return impl_->arena_bytes; }

std::string Engine::inspect() const {
  const plan::Plan& p = impl_->plan;
  std::ostringstream os;
  os << "plan: " << name_ << "\n";
  os << "  producer: " << p.producer << ", built from " << p.source << "\n";
  os << "  backend: " << (p.backend == 0 ? "cpu" : "cuda") << " (" << p.device << ")\n";
  os << "  weights: " << weightBytes() << " bytes\n";
  os << "inputs:\n";
  for (const auto& io : io_)
    if (io.is_input) os << "  " << io.name << " " << dtypeName(io.dtype) << io.shape << (io.format == Format::kHWC ? " HWC" : "") << "\n";
  os << "outputs:\n";
  for (const auto& io : io_)
    if (!io.is_input) os << "  " << io.name << " " << dtypeName(io.dtype) << io.shape << (io.format == Format::kHWC ? " HWC" : "") << "\n";
  for (size_t k = 0; k < p.profiles.size(); ++k) {
    os << "optimization profile " << k << ":\n";
    for (const auto& d : p.profiles[k])
      os << "  " << d.input << ": min " << dimsToString(d.min) << ", opt " << dimsToString(d.opt) << ", max "
         << dimsToString(d.max) << "\n";
    // Activation memory at each point (the plan's storage lifetimes at those shapes).
    for (int point = 0; point < 3; ++point) {
      auto ctx = createExecutionContext();
      if (!ctx) break;
      bool ok = (*ctx)->setOptimizationProfile(static_cast<int>(k)).isOk();
      for (const auto& d : p.profiles[k]) {
        const auto& dims = point == 0 ? d.min : point == 1 ? d.opt : d.max;
        ok = ok && (*ctx)->setInputShape(d.input, dims).isOk();
      }
      ok = ok && (*ctx)->impl_->prepare().isOk();
      static const char* kPoint[] = {"min", "opt", "max"};
      if (ok) os << "  activation memory at " << kPoint[point] << ": " << (*ctx)->activationBytes() << " bytes\n";
    }
  }
  os << "layers (" << p.nodes.size() << "):\n";
  int k = 0;
  for (const auto& l : layers()) {
    os << "  [" << k++ << "] " << l.name << "  " << l.op << "  (" << l.library << ")\n";
    os << "      combination: " << l.combo << "   tactic: " << l.tactic;
    if (l.build_time_ms >= 0) os << "   time at build: " << l.build_time_ms << " ms";
    os << "   workspace: " << l.workspace << " bytes\n";
    for (const auto& i : l.inputs) os << "      in:  " << i << "\n";
    for (const auto& o : l.outputs) os << "      out: " << o << "\n";
  }
  return os.str();
}

}  // namespace opforge
