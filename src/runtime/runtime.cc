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

#include "../common/checked.h"
#include "../device/device.h"
#include "../plan/plan.h"
#include "../shapes/evaluator.h"
#include "memory_plan.h"

namespace opforge {

namespace {

constexpr size_t kArenaAlign = 256;

size_t alignUp(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

class AlignedBuffer {
 public:
  ~AlignedBuffer() { std::free(p_); }
  bool reserve(size_t n) {
    if (n <= cap_ && p_) return true;
    void* q = nullptr;
    if (::posix_memalign(&q, kArenaAlign, std::max<size_t>(n, 1)) != 0) return false;
    std::free(p_);
    p_ = static_cast<uint8_t*>(q);
    cap_ = n;
    return true;
  }
  uint8_t* data() const { return p_; }

 private:
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

// Device memory (or pinned host memory) that grows on demand.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }
  Status reserve(rt::DeviceApi* dev, size_t n, bool pinned_host) {
    if (n <= cap_ && (p_ || n == 0)) return Status::ok();
    release();
    dev_ = dev;
    pinned_ = pinned_host;
    Status st = pinned_host ? dev->mallocHost(&p_, n) : dev->malloc(&p_, n);
    if (!st) return st;
    cap_ = n;
    return Status::ok();
  }
  void release() {
    if (p_ && dev_) pinned_ ? dev_->freeHost(p_) : dev_->free(p_);
    p_ = nullptr;
    cap_ = 0;
  }
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }
  size_t capacity() const { return cap_; }

 private:
  rt::DeviceApi* dev_ = nullptr;
  void* p_ = nullptr;
  size_t cap_ = 0;
  bool pinned_ = false;
};

std::string opKey(const plan::Node& n) {
  return n.ns.empty() ? n.op : n.ns + "::" + n.op;
}

// A loaded plan's node checked against its op, as the builder checked it when it made the node:
// the inputs against the schema (count, required inputs present), then the shape rule re-run on
// the plan's own tensor descriptions, whose outputs must be the plan's (count, dtype, dims).
// The shape rule is skipped only for a node whose shape-time value inputs are not constants of
// the plan (the builder knew them symbolically); the attribute check always runs.
// The host's physical memory in bytes (0: unknown).
uint64_t hostMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

Status checkNodeAgainstOp(const std::string& file, const plan::Plan& p, const uint8_t* weights,
                          const plan::Node& n, const RegisteredOp& op, const AttrMap& attrs) {
  const OpSchema& s = op.schema();
  const std::string where = file + ": plan node '" + n.name + "' (" + opKey(n) + ")";
  auto bad = [&](const std::string& why) {
    return Status::corrupt(where + ": " + why + " (tampered or damaged plan; rebuild it)");
  };
  size_t required = 0;
  const bool variadic = !s.inputs.empty() && s.inputs.back().variadic;
  for (const auto& io : s.inputs)
    if (!io.optional) ++required;
  if (n.inputs.size() < required || (!variadic && n.inputs.size() > s.inputs.size()))
    return bad("has " + std::to_string(n.inputs.size()) + " inputs; the op takes " +
               std::to_string(required) +
               (variadic ? " or more" : " to " + std::to_string(s.inputs.size())));
  // Inputs the builder drops once the shape rule has used them (graph/passes/shape_inputs.cc, kept
  // in step with this list): their kernels never read them, and without their values the shape
  // rule cannot be re-run here.
  static constexpr std::pair<const char*, size_t> kDroppedShapeInputs[] = {
      {"ai.onnx::Reshape", 1},         {"ai.onnx::Expand", 1},    {"ai.onnx::Tile", 1},
      {"ai.onnx::ConstantOfShape", 0}, {"ai.onnx::Split", 1},     {"ai.onnx::TopK", 1},
      {"ai.onnx::Squeeze", 1},         {"ai.onnx::Unsqueeze", 1},
  };
  bool dropped_any = false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const IoDef& decl = s.inputs[std::min(i, s.inputs.size() - 1)];
    if (n.inputs[i] >= 0) continue;
    bool dropped = false;
    for (const auto& [key, index] : kDroppedShapeInputs) dropped |= opKey(n) == key && index == i;
    dropped_any |= dropped;
    if (!decl.optional && !dropped)
      return bad("input " + std::to_string(i) + " ('" + decl.name + "') is required but missing");
  }
  // The tactic runs where the node says, and a CPU plan runs nothing on the GPU.
  for (const auto& t : s.tactics)
    if (t.id == n.tactic && static_cast<int32_t>(t.backend) != n.backend)
      return bad("tactic " + std::to_string(n.tactic) + " runs on the " +
                 (t.backend == Backend::kCuda ? "GPU" : "CPU") + " but the node says backend " +
                 std::to_string(n.backend));
  if (p.backend == static_cast<int32_t>(Backend::kCpu) &&
      n.backend != static_cast<int32_t>(Backend::kCpu))
    return bad("a CPU plan holds a node of backend " + std::to_string(n.backend));
  if (dropped_any) return Status::ok();
  std::vector<InferInput> ins(n.inputs.size());
  std::vector<std::unique_ptr<TensorValue>> consts;
  bool unknown_values = false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) continue;
    const plan::Tensor& pt = p.tensors[n.inputs[i]];
    ins[i].present = true;
    ins[i].desc = SymDesc::make(pt.dtype, pt.dims);
    if (!s.inputs[std::min(i, s.inputs.size() - 1)].value) continue;
    // As the builder's shape queries (graph.cc, inferInputs): a constant travels when it has at
    // most 65536 elements, its values when at most 4096 integers.
    if (pt.kind != plan::TensorKind::kConstant) {
      unknown_values = true;  // known only symbolically at build, if at all: run without it
      continue;
    }
    int64_t numel = 1;
    for (const auto& d : pt.dims) numel *= d.constValue();  // validated: the bytes fit
    if (numel > 65536) continue;
    auto c = std::make_unique<TensorValue>();
    c->desc.dtype = pt.dtype;
    for (const auto& d : pt.dims) c->desc.dims.push_back(d.constValue());
    c->data.assign(weights + pt.weight_offset, weights + pt.weight_offset + pt.weight_bytes);
    if ((pt.dtype == DataType::kInt64 || pt.dtype == DataType::kInt32) && c->desc.rank() <= 1 &&
        c->desc.numel() <= 4096) {
      std::vector<DimExpr> v;
      for (int64_t e = 0; e < c->desc.numel(); ++e)
        v.emplace_back(pt.dtype == DataType::kInt64
                           ? reinterpret_cast<const int64_t*>(c->data.data())[e]
                           : int64_t{reinterpret_cast<const int32_t*>(c->data.data())[e]});
      ins[i].value = std::move(v);
    }
    ins[i].constant = c.get();
    consts.push_back(std::move(c));
  }
  auto r = op.infer(n.name, attrs, ins, n.name + "#");
  // A rule that needs values the plan does not hold (a shape computed from dimensions) cannot be
  // re-run here; one that runs without them must give the plan's outputs.
  if (!r && unknown_values) return Status::ok();
  if (!r) return bad("its op's shape rule refuses it: " + r.status().message());
  if (r->outputs.size() != n.outputs.size())
    return bad("has " + std::to_string(n.outputs.size()) + " outputs; the shape rule gives " +
               std::to_string(r->outputs.size()));
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    const plan::Tensor& pt = p.tensors[n.outputs[o]];
    const SymDesc& want = r->outputs[o];
    bool same = want.dtype == pt.dtype && want.dims.size() == pt.dims.size();
    // A symbolic dimension may be equal in another form (a fused node's rule writes x.0*12 where
    // the builder kept 12*x.0, or a refined value): only two constants are compared, with the
    // dtype and the rank.
    for (size_t a = 0; same && a < pt.dims.size(); ++a)
      same = want.dims[a].sameAs(pt.dims[a]) || !(want.dims[a].isConst() && pt.dims[a].isConst());
    if (!same)
      return bad("output " + std::to_string(o) + " ('" + pt.name + "') is " + dtypeName(pt.dtype) +
                 toString(pt.dims) + "; the op's shape rule gives " + dtypeName(want.dtype) +
                 toString(want.dims));
  }
  return Status::ok();
}

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
  bool cuda = false;
  rt::DeviceApi* dev = nullptr;
  void* weights_dev = nullptr;
  bool host_sync_needed = false;  // data-dependent sizes or CPU-fallback layers

  ~Impl() {
    instances.clear();
    if (dev && weights_dev) dev->free(weights_dev);
    if (map) ::munmap(map, map_size);
  }
};

Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

Result<std::shared_ptr<Engine>> Engine::finishLoad(std::shared_ptr<Engine> e, const uint8_t* data,
                                                   size_t size) {
  Engine::Impl& im = *e->impl_;
  OPFORGE_ASSIGN_OR_RETURN(im.plan,
                           plan::deserialize(data, size, im.name, &im.weights, &im.weights_size));
  const plan::Plan& p = im.plan;
  im.cuda = p.backend == static_cast<int32_t>(Backend::kCuda);
  if (im.cuda) {
    const std::string built = p.device + ", " + p.arch + ", CUDA " +
                              std::to_string(p.cuda_runtime / 1000) + "." +
                              std::to_string((p.cuda_runtime % 1000) / 10);
    auto dev = rt::cudaDevice();
    if (!dev)
      return Status(dev.status().code(), im.name + ": the plan was built for the GPU (" + built +
                                             ") but " + dev.status().message());
    im.dev = *dev;
    const DeviceInfo& info = im.dev->info();
    if (info.arch() != p.arch)
      return Status::version(
          im.name + ": the plan was built for " + built + "; this GPU is " + info.describe() +
          ". Plans hold kernels chosen for one GPU architecture: rebuild the plan on this GPU.");
    if (info.runtime_version / 1000 < p.cuda_runtime / 1000)
      return Status::version(im.name + ": the plan was built with CUDA " +
                             std::to_string(p.cuda_runtime / 1000) + " (" + built +
                             "); this machine's CUDA runtime is " + info.describe() +
                             ". Rebuild the plan here or upgrade CUDA.");
  }
  // Resolve every op; report all missing ones at once.
  std::vector<std::string> missing;
  std::set<std::string> missing_libs;
  for (const auto& n : p.nodes) {
    const RegisteredOp* op = im.registry->find(n.ns, n.op, n.version);
    im.ops.push_back(op);
    if (!op) {
      missing.push_back("  " + opKey(n) + " v" + n.version + " (node '" + n.name + "', from " +
                        n.library + " when the plan was built)");
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
    msg += "Load the library that defines them (" + libs +
           ") with --plugins=PATH, e.g. --plugins=build/lib/" + *missing_libs.begin() + ".";
    return Status::notFound(msg);
  }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    auto attrs = im.ops[k]->validateAttrs(n.name, n.attrs);
    if (!attrs)
      return attrs.status().withContext(im.name +
                                        ": the op's definition changed since the plan was built");
    OPFORGE_RETURN_IF_ERROR(checkNodeAgainstOp(im.name, p, im.weights, n, *im.ops[k], *attrs));
    bool has_tactic = false;
    for (const auto& t : im.ops[k]->schema().tactics) has_tactic |= t.id == n.tactic;
    if (!has_tactic)
      return Status::notFound(im.name + ": node '" + n.name + "' uses tactic " +
                              std::to_string(n.tactic) + " (" + n.tactic_name + ") of " + opKey(n) +
                              ", which the loaded library (" + im.ops[k]->library().path +
                              ") does not have; rebuild the plan");
    OPFORGE_ASSIGN_OR_RETURN(auto inst, im.ops[k]->instantiate(n.name, *attrs));
    im.instances.push_back(std::move(inst));
    im.host_sync_needed |=
        !n.size_tensors.empty() || (im.cuda && n.backend == static_cast<int32_t>(Backend::kCpu));
  }
  for (size_t t = 0; t < p.tensors.size(); ++t)
    im.tensor_by_name[p.tensors[t].name] = static_cast<int>(t);
  std::set<std::string> size_symbols;
  for (const auto& n : p.nodes)
    for (const auto& s : n.size_tensors) size_symbols.insert(s.symbol);
  im.has_size_symbol.assign(p.tensors.size(), false);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    for (const auto& d : p.tensors[t].dims)
      for (const auto& s : size_symbols)
        im.has_size_symbol[t] = im.has_size_symbol[t] || d.dependsOn(s);
  if (im.cuda && im.weights_size) {
    // Weights go to the GPU once per engine.
    OPFORGE_RETURN_IF_ERROR(im.dev->malloc(&im.weights_dev, im.weights_size));
    OPFORGE_RETURN_IF_ERROR(im.dev->memcpyAsync(im.weights_dev, im.weights, im.weights_size,
                                                rt::CopyKind::kHostToDevice, nullptr));
    OPFORGE_RETURN_IF_ERROR(im.dev->streamSynchronize(nullptr));
  }
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
  // A FIFO would block open() until a writer appears; a directory is no plan. Refuse both before
  // opening, and open non-blocking so that a file swapped in meanwhile cannot block either.
  {
    struct stat pre;
    if (::stat(path.c_str(), &pre) == 0 && !S_ISREG(pre.st_mode))
      return checked::regularFile(path, "plan file");
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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

Result<std::shared_ptr<Engine>> Engine::loadMemory(std::vector<uint8_t> bytes,
                                                   const std::string& name,
                                                   std::shared_ptr<Registry> registry) {
  std::shared_ptr<Engine> e(new Engine());
  Impl& im = *e->impl_;
  im.name = name;
  im.registry = registry ? std::move(registry) : Registry::global();
  im.owned = std::move(bytes);
  return finishLoad(std::move(e), im.owned.data(), im.owned.size());
}

int Engine::numProfiles() const {
  return static_cast<int>(impl_->plan.profiles.size());
}
Backend Engine::backend() const {
  return static_cast<Backend>(impl_->plan.backend);
}
std::string Engine::deviceDescription() const {
  const auto& p = impl_->plan;
  if (!impl_->cuda) return "cpu";
  return p.device + ", " + p.arch + ", CUDA " + std::to_string(p.cuda_runtime / 1000) + "." +
         std::to_string((p.cuda_runtime % 1000) / 10);
}

Result<std::vector<std::vector<int64_t>>> Engine::profileShapes(int profile,
                                                                const std::string& input) const {
  if (profile < 0 || profile >= numProfiles())
    return Status::outOfRange("optimization profile " + std::to_string(profile) +
                              " does not exist (the plan has " + std::to_string(numProfiles()) +
                              ")");
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
    l.op = opKey(n) + " v" + n.version;
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
  rt::DeviceApi* dev = nullptr;  // CUDA plans
  int profile = 0;
  std::map<int32_t, std::vector<int64_t>> input_shapes;  // tensor id -> dims
  std::set<int32_t> inputs_written;
  bool dirty = true;
  bool executed = false;
  shapes::Evaluator bindings{"at these input shapes"};  // input dims, then data-dependent sizes
  std::vector<std::vector<int64_t>> alloc_dims;         // per tensor, sizes used for allocation
  std::vector<std::vector<int64_t>> dims;  // per tensor, real dims (after its producer ran)
  std::vector<size_t> storage_offset, storage_bytes;
  std::vector<bool> storage_is_input;
  size_t arena_bytes = 0;
  size_t workspace_bytes = 0;
  std::vector<size_t> node_workspace;
  AlignedBuffer arena;      // CPU plans
  AlignedBuffer workspace;  // CPU plans and CPU-fallback layers
  std::map<int32_t, std::unique_ptr<AlignedBuffer>> host_inputs;  // CPU plans: inputs live here
  DeviceBuffer arena_dev, workspace_dev;                          // CUDA plans
  std::map<int32_t, std::unique_ptr<DeviceBuffer>> staging;  // pinned host copies of inputs/outputs
  std::map<int32_t, void*> bound;                            // caller-owned device memory
  std::set<int32_t> staged_inputs;                           // inputs whose staging copy is current
  DeviceBuffer readback;                                     // pinned: size tensors, fallback I/O
  // Run-time errors found on the device (opforge/device_error.h): one pinned record per layer,
  // handed to its CUDA tactic, which the device writes; every CUDA layer's record is read after
  // synchronize (a graph replay writes the records its capture was given).
  DeviceBuffer error_records;
  DeviceErrorRecord* errorRecord(size_t k) {
    return reinterpret_cast<DeviceErrorRecord*>(error_records.data()) + k;
  }
  Status checkDeviceErrors();
  std::vector<std::unique_ptr<AlignedBuffer>> fallback;  // host memory for CPU-fallback layers
  void* own_stream = nullptr;
  void* last_stream = nullptr;
  void* ev[4] = {nullptr, nullptr, nullptr, nullptr};
  std::vector<void*> layer_ev;
  bool use_graph = true;
  void* graph = nullptr;
  uint64_t graph_key = 0;
  int runs_since_shapes = 0;
  bool poison = false;
  bool profiling = false;
  bool sync_each_layer = std::getenv("OPFORGE_SYNC_EACH_LAYER") != nullptr;
  std::vector<LayerTime> times;
  RunTimes run_times;

  ~Impl() {
    if (dev) {
      if (graph) dev->graphDestroy(graph);
      for (void* x : ev) dev->eventDestroy(x);
      for (void* x : layer_ev) dev->eventDestroy(x);
      if (own_stream) dev->streamDestroy(own_stream);
    }
  }

  DimExpr::Lookup lookup() const { return bindings.lookup(); }
  // "node 'a' (ai.onnx::Add v1)", as the builder names nodes; made once (prepare), so the layer
  // loop builds no string unless a check fails.
  std::vector<std::string> labels;
  const std::string& label(size_t k) {
    if (labels.size() != plan().nodes.size()) {
      labels.clear();
      for (const auto& n : plan().nodes)
        labels.push_back("node '" + n.name + "' (" + opKey(n) + " v" + n.version + ")");
    }
    return labels[k];
  }
  const plan::Plan& plan() const { return e->plan; }
  bool cuda() const { return e->cuda; }
  Status prepare();
  void bindInputs();
  // Where a tensor lives for the layers: device memory for CUDA plans, host memory for CPU plans.
  void* tensorData(int32_t t) const {
    const auto& pt = plan().tensors[t];
    if (pt.kind == plan::TensorKind::kConstant) {
      if (cuda()) return static_cast<uint8_t*>(e->weights_dev) + pt.weight_offset;
      return const_cast<uint8_t*>(e->weights + pt.weight_offset);
    }
    if (cuda()) {
      auto it = bound.find(t);
      if (it != bound.end()) return it->second;
      return arena_dev.data() + storage_offset[pt.storage];
    }
    if (pt.kind == plan::TensorKind::kInput) return host_inputs.at(t)->data();
    return arena.data() + storage_offset[pt.storage];
  }
  TensorDesc desc(int32_t t, const std::vector<int64_t>& d) const {
    const auto& pt = plan().tensors[t];
    return TensorDesc{pt.dtype, d, pt.format};
  }
  Status runLayers(void* stream, bool capturing);
  Status runFallback(size_t k, const std::vector<Tensor>& ins, const std::vector<Tensor>& outs,
                     void* stream);
  Status ensureStreamAndEvents();
  uint64_t graphKey() const;
};

ExecutionContext::ExecutionContext() : impl_(std::make_unique<Impl>()) {}
ExecutionContext::~ExecutionContext() = default;

Result<std::unique_ptr<ExecutionContext>> Engine::createExecutionContext() const {
  std::unique_ptr<ExecutionContext> c(new ExecutionContext());
  c->impl_->engine = shared_from_this();
  c->impl_->e = impl_.get();
  c->impl_->dev = impl_->dev;
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
    return Status::outOfRange("optimization profile " + std::to_string(index) +
                              " does not exist (the plan has " +
                              std::to_string(impl_->e->plan.profiles.size()) + ")");
  impl_->profile = index;
  impl_->dirty = true;
  return Status::ok();
}

int ExecutionContext::optimizationProfile() const {
  return impl_->profile;
}

Status ExecutionContext::setInputShape(const std::string& name, const std::vector<int64_t>& dims) {
  const plan::Plan& p = impl_->plan();
  auto it = impl_->e->tensor_by_name.find(name);
  if (it == impl_->e->tensor_by_name.end() ||
      p.tensors[it->second].kind != plan::TensorKind::kInput) {
    std::string names;
    for (int32_t t : p.inputs) names += (names.empty() ? "" : ", ") + p.tensors[t].name;
    return Status::notFound("'" + name + "' is not an input of " + impl_->e->name +
                            " (inputs: " + names + ")");
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
        return Status::invalid("input '" + name + "' dimension " + std::to_string(a) +
                               " is fixed at " + std::to_string(pt.dims[a].constValue()) +
                               "; got " + std::to_string(dims[a]));
    } else if (range && (dims[a] < range->min[a] || dims[a] > range->max[a])) {
      return Status::outOfRange(
          "input '" + name + "' shape " + dimsToString(dims) + ": dimension " + std::to_string(a) +
          " = " + std::to_string(dims[a]) + " is outside optimization profile " +
          std::to_string(impl_->profile) + " [" + std::to_string(range->min[a]) + ", " +
          std::to_string(range->max[a]) + "] (min " + dimsToString(range->min) + ", max " +
          dimsToString(range->max) + ")");
    }
  }
  auto& cur = impl_->input_shapes[t];
  if (cur != dims) {
    cur = dims;
    impl_->dirty = true;
    impl_->inputs_written.erase(t);
    impl_->staged_inputs.erase(t);
  }
  return Status::ok();
}

void ExecutionContext::Impl::bindInputs() {
  bindings.clear();
  for (const auto& [sym, pos] : plan().input_symbols)
    bindings.bind(sym, input_shapes.at(pos.first)[pos.second]);
}

Status ExecutionContext::Impl::ensureStreamAndEvents() {
  if (!own_stream) OPFORGE_RETURN_IF_ERROR(dev->streamCreate(&own_stream));
  for (void*& x : ev)
    if (!x) OPFORGE_RETURN_IF_ERROR(dev->eventCreate(&x));
  return Status::ok();
}

Status ExecutionContext::Impl::prepare() {
  if (!dirty) return Status::ok();
  const plan::Plan& p = plan();
  for (int32_t t : p.inputs)
    if (!input_shapes.count(t))
      return Status::invalid(
          "input '" + p.tensors[t].name + "' " + toString(p.tensors[t].dims) +
          " has dynamic dimensions and no shape yet (setInputShape; CLI: --shapes=" +
          p.tensors[t].name + ":...)");
  bindInputs();
  // Data-dependent sizes: allocate for their upper bound.
  for (size_t k = 0; k < p.nodes.size(); ++k)
    OPFORGE_RETURN_IF_ERROR(
        bindings.bindSizes(label(k), p.nodes[k].size_tensors, shapes::Bound::kUpper));
  // Assertions over a node's own data-dependent size are checked when it has run (runLayers).
  std::vector<std::string> what(p.tensors.size());
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    for (const auto& a : n.assertions) {
      bool depends = false;
      for (const auto& s : n.size_tensors)
        depends |= a.lhs.dependsOn(s.symbol) || a.rhs.dependsOn(s.symbol);
      if (!depends) OPFORGE_RETURN_IF_ERROR(bindings.check(label(k), a, shapes::Unbound::kSkip));
    }
    for (int32_t t : n.outputs) what[t] = label(k) + ": output '" + p.tensors[t].name + "'";
  }
  alloc_dims.assign(p.tensors.size(), {});
  storage_bytes.assign(p.storages.size(), 0);
  storage_is_input.assign(p.storages.size(), false);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& pt = p.tensors[t];
    auto d = bindings.dims(what[t].empty() ? "tensor '" + pt.name + "'" : what[t], pt.dims);
    if (!d) return d.status();
    alloc_dims[t] = *d;
    if (pt.kind == plan::TensorKind::kConstant) continue;
    size_t bytes = TensorDesc{pt.dtype, *d, pt.format}.bytes();
    if (pt.kind == plan::TensorKind::kInput) {
      storage_is_input[pt.storage] = true;
      // CPU plans keep inputs in their own buffers (stable across re-plans; layers never write
      // them: the builder copies before in-place ops).
      if (!cuda()) {
        auto& b = host_inputs[static_cast<int32_t>(t)];
        if (!b) b = std::make_unique<AlignedBuffer>();
        const uint64_t host = hostMemoryBytes();
        if ((host && bytes > host) || !b->reserve(alignUp(std::max<size_t>(bytes, 1), kArenaAlign)))
          return Status::runtime("cannot allocate " + std::to_string(bytes) + " bytes for input '" +
                                 pt.name + "'");
        continue;
      }
    }
    storage_bytes[pt.storage] =
        std::max(storage_bytes[pt.storage], alignUp(std::max<size_t>(bytes, 1), kArenaAlign));
  }
  // Offsets: storages alive at the same time never share bytes (memory_plan.h).
  rt::ArenaLayout layout = rt::planArena(storage_bytes, p.storages);
  storage_offset = std::move(layout.offsets);
  const size_t total = layout.total;
  // Workspace: the largest any layer needs at these shapes.
  node_workspace.assign(p.nodes.size(), 0);
  workspace_bytes = 0;
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    std::vector<TensorDesc> in, out;
    for (int32_t t : n.inputs) in.push_back(t < 0 ? TensorDesc{} : desc(t, alloc_dims[t]));
    for (int32_t t : n.outputs) out.push_back(desc(t, alloc_dims[t]));
    size_t ws = 0;
    if (!e->instances[k]->tacticApplies(n.tactic, in, out, &ws))
      return Status::runtime(
          "node '" + n.name + "' (" + opKey(n) + "): tactic " + std::to_string(n.tactic) + " (" +
          n.tactic_name +
          ") does not apply at these shapes; rebuild the plan with a profile covering them");
    node_workspace[k] = ws;
    workspace_bytes = std::max(workspace_bytes, ws);
  }
  if (cuda()) {
    OPFORGE_RETURN_IF_ERROR(arena_dev.reserve(dev, total, false));
    OPFORGE_RETURN_IF_ERROR(workspace_dev.reserve(dev, workspace_bytes, false));
    for (int32_t t : p.inputs) {
      auto& b = staging[t];
      if (!b) b = std::make_unique<DeviceBuffer>();
      OPFORGE_RETURN_IF_ERROR(b->reserve(dev, desc(t, alloc_dims[t]).bytes(), true));
    }
    for (int32_t t : p.outputs) {
      if (p.tensors[t].kind == plan::TensorKind::kInput) continue;
      auto& b = staging[t];
      if (!b) b = std::make_unique<DeviceBuffer>();
      OPFORGE_RETURN_IF_ERROR(b->reserve(dev, desc(t, alloc_dims[t]).bytes(), true));
    }
    OPFORGE_RETURN_IF_ERROR(readback.reserve(dev, 64 * std::max<size_t>(1, p.nodes.size()), true));
    OPFORGE_RETURN_IF_ERROR(error_records.reserve(
        dev, sizeof(DeviceErrorRecord) * std::max<size_t>(1, p.nodes.size()), true));
    std::memset(error_records.data(), 0, error_records.capacity());
    if (graph) {
      dev->graphDestroy(graph);
      graph = nullptr;
    }
  } else {
    // More than the host's physical memory is refused before it is asked for: with overcommit an
    // allocation of terabytes can succeed and the first writes end the process.
    const uint64_t host = hostMemoryBytes();
    if ((host && total > host) || !arena.reserve(total))
      return Status::runtime("cannot allocate " + std::to_string(total) +
                             " bytes of activation memory for " + e->name +
                             (host ? " (the host has " + std::to_string(host) + " bytes)" : ""));
  }
  arena_bytes = total;
  runs_since_shapes = 0;
  dirty = false;
  executed = false;
  return Status::ok();
}

Status ExecutionContext::setInput(const std::string& name, const void* data, size_t bytes) {
  Impl& c = *impl_;
  const plan::Plan& p = c.plan();
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end() || p.tensors[it->second].kind != plan::TensorKind::kInput)
    return Status::notFound("'" + name + "' is not an input of " + c.e->name);
  OPFORGE_RETURN_IF_ERROR(c.prepare());
  const int32_t t = it->second;
  TensorDesc d = c.desc(t, c.alloc_dims[t]);
  if (bytes != d.bytes())
    return Status::invalid("input '" + name + "' is " + describe(d) + " = " +
                           std::to_string(d.bytes()) + " bytes; got " + std::to_string(bytes) +
                           " bytes");
  if (bytes)
    std::memcpy(c.cuda() ? c.staging[t]->data() : static_cast<uint8_t*>(c.tensorData(t)), data,
                bytes);
  c.inputs_written.insert(t);
  c.staged_inputs.insert(t);
  return Status::ok();
}

Status ExecutionContext::setTensorAddress(const std::string& name, void* device_ptr) {
  Impl& c = *impl_;
  if (!c.cuda())
    return Status::invalid("setTensorAddress: " + c.e->name +
                           " is a CPU plan; use setInput/output");
  auto it = c.e->tensor_by_name.find(name);
  const plan::Plan& p = c.plan();
  if (it == c.e->tensor_by_name.end() ||
      (p.tensors[it->second].kind != plan::TensorKind::kInput && !p.tensors[it->second].is_output))
    return Status::notFound("'" + name + "' is not an input or output of " + c.e->name);
  const int32_t t = it->second;
  if (device_ptr) {
    c.bound[t] = device_ptr;
    if (p.tensors[t].kind == plan::TensorKind::kInput) {
      c.inputs_written.insert(t);
      c.staged_inputs.erase(t);
    }
  } else {
    c.bound.erase(t);
  }
  if (c.graph) {
    c.dev->graphDestroy(c.graph);
    c.graph = nullptr;
    c.runs_since_shapes = 0;
  }
  return Status::ok();
}

uint64_t ExecutionContext::Impl::graphKey() const {
  uint64_t h = reinterpret_cast<uintptr_t>(arena_dev.data()) ^
               (reinterpret_cast<uintptr_t>(workspace_dev.data()) << 1);
  for (const auto& [t, p] : bound)
    h = h * 1099511628211ull ^ (static_cast<uint64_t>(t) << 32) ^ reinterpret_cast<uintptr_t>(p);
  return h;
}

Status ExecutionContext::Impl::runFallback(size_t k, const std::vector<Tensor>& ins,
                                           const std::vector<Tensor>& outs, void* stream) {
  // A layer with no CUDA tactic in a CUDA plan: copy its inputs to the host, run the CPU
  // reference, copy the outputs back.
  const auto& n = plan().nodes[k];
  std::vector<Tensor> hin = ins, hout = outs;
  size_t need = 0;
  for (const auto& t : ins) need += alignUp(t.bytes(), 64);
  for (const auto& t : outs) need += alignUp(t.bytes(), 64);
  if (fallback.size() <= k) fallback.resize(k + 1);
  if (!fallback[k]) fallback[k] = std::make_unique<AlignedBuffer>();
  if (!fallback[k]->reserve(need))
    return Status::runtime("cannot allocate host memory for CPU layer '" + n.name + "'");
  uint8_t* cur = fallback[k]->data();
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i].data) continue;
    const int32_t t = n.inputs[i];
    if (plan().tensors[t].kind == plan::TensorKind::kConstant) {
      hin[i].data = const_cast<uint8_t*>(e->weights + plan().tensors[t].weight_offset);
    } else {
      hin[i].data = cur;
      OPFORGE_RETURN_IF_ERROR(
          dev->memcpyAsync(cur, ins[i].data, ins[i].bytes(), rt::CopyKind::kDeviceToHost, stream));
      cur += alignUp(ins[i].bytes(), 64);
    }
    hin[i].device = Device::kCpu;
  }
  for (auto& o : hout) {
    o.data = cur;
    o.device = Device::kCpu;
    cur += alignUp(o.bytes(), 64);
  }
  OPFORGE_RETURN_IF_ERROR(dev->streamSynchronize(stream));
  for (size_t o = 0; o < outs.size(); ++o) {
    // In place: the output starts as its input.
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i].data && ins[i].data == outs[o].data)
        std::memcpy(hout[o].data, hin[i].data, hout[o].bytes());
  }
  OPFORGE_RETURN_IF_ERROR(
      workspace.reserve(node_workspace[k]) ? Status::ok() : Status::runtime("out of host memory"));
  OPFORGE_RETURN_IF_ERROR(
      e->instances[k]->run(n.tactic, hin, hout, workspace.data(), node_workspace[k], nullptr));
  for (size_t o = 0; o < outs.size(); ++o)
    OPFORGE_RETURN_IF_ERROR(dev->memcpyAsync(outs[o].data, hout[o].data, outs[o].bytes(),
                                             rt::CopyKind::kHostToDevice, stream));
  return Status::ok();
}

Status ExecutionContext::Impl::runLayers(void* stream, bool capturing) {
  const plan::Plan& p = plan();
  bindInputs();
  dims = alloc_dims;
  if (profiling && cuda() && !capturing) {
    while (layer_ev.size() < p.nodes.size() + 1) {
      void* x = nullptr;
      OPFORGE_RETURN_IF_ERROR(dev->eventCreate(&x));
      layer_ev.push_back(x);
    }
  }
  times.clear();
  const auto host_start = std::chrono::steady_clock::now();
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    const auto t0 = std::chrono::steady_clock::now();
    // An assertion over this node's own data-dependent size is skipped (not bound yet).
    if (!n.assertions.empty())
      OPFORGE_RETURN_IF_ERROR(bindings.checkAll(label(k), n.assertions, shapes::Unbound::kSkip));
    const Device where = cuda() ? Device::kCuda : Device::kCpu;
    std::vector<Tensor> ins, outs;
    for (int32_t t : n.inputs)
      ins.push_back(t < 0 ? Tensor{} : Tensor{desc(t, dims[t]), tensorData(t), where});
    for (int32_t t : n.outputs) {
      if (e->has_size_symbol[t]) {
        // Outputs sized by this node's own data-dependent size get their upper bound.
        const std::string what = label(k) + ": output '" + p.tensors[t].name + "'";
        if (n.size_tensors.empty()) {
          OPFORGE_ASSIGN_OR_RETURN(dims[t], bindings.dims(what, p.tensors[t].dims));
        } else {
          shapes::Evaluator at_upper = bindings;
          OPFORGE_RETURN_IF_ERROR(
              at_upper.bindSizes(label(k), n.size_tensors, shapes::Bound::kUpper));
          OPFORGE_ASSIGN_OR_RETURN(dims[t], at_upper.dims(what, p.tensors[t].dims));
        }
      }
      outs.push_back(Tensor{desc(t, dims[t]), tensorData(t), where});
    }
    if (!layer_ev.empty() && profiling && !capturing)
      OPFORGE_RETURN_IF_ERROR(dev->eventRecord(layer_ev[k], stream));
    Status st;
    const KernelInstance& inst = *e->instances[k];
    if (!cuda()) {
      if (node_workspace[k] && !workspace.reserve(node_workspace[k]))
        return Status::runtime("out of host memory for workspace");
      st = inst.run(n.tactic, ins, outs, workspace.data(), node_workspace[k], nullptr);
    } else if (n.backend == static_cast<int32_t>(Backend::kCpu)) {
      st = runFallback(k, ins, outs, stream);
    } else {
      st = inst.run(n.tactic, ins, outs, workspace_dev.data(), node_workspace[k], stream,
                    errorRecord(k));
      if (st && sync_each_layer && !capturing) st = dev->streamSynchronize(stream);
    }
    if (!st)
      return Status(st.code(), "node '" + n.name + "' (" + opKey(n) + ", tactic " +
                                   std::to_string(n.tactic) + " " + n.tactic_name +
                                   "): " + st.message());
    for (const auto& s : n.size_tensors) {
      const Tensor& out = outs[s.output];
      int64_t v = 0;
      if (cuda()) {
        uint8_t* rb = readback.data();
        OPFORGE_RETURN_IF_ERROR(dev->memcpyAsync(rb, out.data, dtypeSize(out.desc.dtype),
                                                 rt::CopyKind::kDeviceToHost, stream));
        OPFORGE_RETURN_IF_ERROR(dev->streamSynchronize(stream));
        v = out.desc.dtype == DataType::kInt64 ? *reinterpret_cast<const int64_t*>(rb)
                                               : *reinterpret_cast<const int32_t*>(rb);
      } else {
        v = out.desc.dtype == DataType::kInt64 ? *static_cast<const int64_t*>(out.data)
                                               : *static_cast<const int32_t*>(out.data);
      }
      auto upper = s.upper.eval(lookup());
      if (!upper) return upper.status();
      if (v < 0 || v > *upper)
        return Status::runtime("node '" + n.name + "' reported data-dependent size " +
                               std::to_string(v) + " outside [0, " + std::to_string(*upper) +
                               "] (its declared upper bound)");
      bindings.bind(s.symbol, v);
    }
    if (!n.size_tensors.empty()) {
      // Real shapes of this node's outputs now that their sizes are known.
      for (int32_t t : n.outputs) {
        OPFORGE_ASSIGN_OR_RETURN(
            dims[t],
            bindings.dims(label(k) + ": output '" + p.tensors[t].name + "'", p.tensors[t].dims));
      }
    }
    if (profiling && !cuda()) {
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      double start = std::chrono::duration<double, std::milli>(t0 - host_start).count();
      times.push_back({n.name, ms, start});
    }
  }
  if (!layer_ev.empty() && profiling && !capturing)
    OPFORGE_RETURN_IF_ERROR(dev->eventRecord(layer_ev[p.nodes.size()], stream));
  // Tensors downstream of data-dependent sizes: their real shapes.
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (e->has_size_symbol[t]) {
      auto d = evalDims(p.tensors[t].dims, lookup());
      if (d) dims[t] = *d;
    }
  return Status::ok();
}

Status ExecutionContext::enqueue(void* user_stream) {
  Impl& c = *impl_;
  OPFORGE_RETURN_IF_ERROR(c.prepare());
  const plan::Plan& p = c.plan();
  for (int32_t t : p.inputs)
    if (!c.inputs_written.count(t))
      return Status::invalid(
          "input '" + p.tensors[t].name +
          "' has no data (setInput; the CLI fills missing inputs with random data)");
  c.executed = false;
  if (!c.cuda()) {
    if (c.poison)
      for (size_t s = 0; s < p.storages.size(); ++s)
        if (!c.storage_is_input[s])
          std::memset(c.arena.data() + c.storage_offset[s], 0xff, c.storage_bytes[s]);
    const auto t0 = std::chrono::steady_clock::now();
    OPFORGE_RETURN_IF_ERROR(c.runLayers(nullptr, false));
    c.run_times = RunTimes{};
    c.run_times.compute_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    c.executed = true;
    return Status::ok();
  }
  OPFORGE_RETURN_IF_ERROR(c.ensureStreamAndEvents());
  void* s = user_stream ? user_stream : c.own_stream;
  c.last_stream = s;
  OPFORGE_RETURN_IF_ERROR(c.dev->eventRecord(c.ev[0], s));
  if (c.poison)
    for (size_t i = 0; i < p.storages.size(); ++i)
      if (!c.storage_is_input[i])
        OPFORGE_RETURN_IF_ERROR(c.dev->memsetAsync(c.arena_dev.data() + c.storage_offset[i], 0xff,
                                                   c.storage_bytes[i], s));
  for (int32_t t : p.inputs)
    if (c.staged_inputs.count(t)) {
      const size_t bytes = c.desc(t, c.alloc_dims[t]).bytes();
      OPFORGE_RETURN_IF_ERROR(c.dev->memcpyAsync(c.tensorData(t), c.staging[t]->data(), bytes,
                                                 rt::CopyKind::kHostToDevice, s));
    }
  OPFORGE_RETURN_IF_ERROR(c.dev->eventRecord(c.ev[1], s));
  // Layers: a CUDA graph replay when possible (static network, second run with these shapes on).
  c.run_times.cuda_graph = false;
  const bool graphable =
      c.use_graph && !c.e->host_sync_needed && !c.profiling && !c.sync_each_layer;
  if (graphable && c.graph && c.graph_key == c.graphKey()) {
    OPFORGE_RETURN_IF_ERROR(c.dev->graphLaunch(c.graph, s));
    c.run_times.cuda_graph = true;
  } else if (graphable && c.runs_since_shapes >= 1) {
    if (c.graph) {
      c.dev->graphDestroy(c.graph);
      c.graph = nullptr;
    }
    OPFORGE_RETURN_IF_ERROR(c.dev->beginCapture(s));
    Status st = c.runLayers(s, true);
    void* g = nullptr;
    Status end = c.dev->endCapture(s, &g);
    OPFORGE_RETURN_IF_ERROR(st);
    OPFORGE_RETURN_IF_ERROR(end);
    if (g) {
      c.graph = g;
      c.graph_key = c.graphKey();
      OPFORGE_RETURN_IF_ERROR(c.dev->graphLaunch(c.graph, s));
      c.run_times.cuda_graph = true;
    } else {
      c.use_graph = false;  // capture failed: a tactic did something graphs can't hold
      OPFORGE_RETURN_IF_ERROR(c.runLayers(s, false));
    }
  } else {
    OPFORGE_RETURN_IF_ERROR(c.runLayers(s, false));
  }
  OPFORGE_RETURN_IF_ERROR(c.dev->eventRecord(c.ev[2], s));
  for (int32_t t : p.outputs) {
    if (p.tensors[t].kind == plan::TensorKind::kInput || c.bound.count(t)) continue;
    const size_t bytes = c.desc(t, c.dims[t]).bytes();
    OPFORGE_RETURN_IF_ERROR(c.dev->memcpyAsync(c.staging[t]->data(), c.tensorData(t), bytes,
                                               rt::CopyKind::kDeviceToHost, s));
  }
  OPFORGE_RETURN_IF_ERROR(c.dev->eventRecord(c.ev[3], s));
  ++c.runs_since_shapes;
  c.executed = true;
  return Status::ok();
}

Status ExecutionContext::synchronize() {
  Impl& c = *impl_;
  if (!c.cuda() || !c.last_stream) return Status::ok();
  Status st = c.dev->streamSynchronize(c.last_stream);
  if (!st) {
    c.executed = false;
    return Status(
        st.code(),
        st.message() +
            " (a layer failed asynchronously; set OPFORGE_SYNC_EACH_LAYER=1 to find which)");
  }
  if (Status err = c.checkDeviceErrors(); !err) {
    c.executed = false;
    return err;
  }
  auto ms = [&](int a, int b) -> double {
    auto r = c.dev->eventElapsedMs(c.ev[a], c.ev[b]);
    return r ? *r : 0.0;
  };
  c.run_times.h2d_ms = ms(0, 1);
  c.run_times.compute_ms = ms(1, 2);
  c.run_times.d2h_ms = ms(2, 3);
  if (c.profiling && !c.run_times.cuda_graph && c.layer_ev.size() > c.plan().nodes.size()) {
    c.times.clear();
    for (size_t k = 0; k < c.plan().nodes.size(); ++k) {
      auto d = c.dev->eventElapsedMs(c.layer_ev[k], c.layer_ev[k + 1]);
      auto start = c.dev->eventElapsedMs(c.layer_ev[0], c.layer_ev[k]);
      c.times.push_back({c.plan().nodes[k].name, d ? *d : 0.0, start ? *start : 0.0});
    }
  }
  return Status::ok();
}

Status ExecutionContext::Impl::checkDeviceErrors() {
  if (!cuda() || !error_records.data()) return Status::ok();
  // The first layer (in execution order) that reported names the error; every written record is
  // cleared, so the next run starts clean.
  const plan::Plan& p = plan();
  Status first = Status::ok();
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    if (n.backend != static_cast<int32_t>(Backend::kCuda)) continue;
    DeviceErrorRecord* rec = errorRecord(k);
    if (rec->flag == 0) continue;
    const DeviceErrorRecord r = *rec;
    std::memset(rec, 0, sizeof(r));
    if (!first) continue;
    std::vector<std::string> names;
    for (const auto& io : e->ops[k]->schema().inputs) names.push_back(io.name);
    first = Status::outOfRange("node '" + n.name + "' (" + opKey(n) + ", tactic " +
                               std::to_string(n.tactic) + " " + n.tactic_name +
                               "): " + describeDeviceError(r, names));
  }
  return first;
}

Status ExecutionContext::execute() {
  OPFORGE_RETURN_IF_ERROR(enqueue(nullptr));
  return synchronize();
}

Result<std::vector<int64_t>> ExecutionContext::shape(const std::string& name) const {
  const Impl& c = *impl_;
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end())
    return Status::notFound("no tensor named '" + name + "' in " + c.e->name);
  const int32_t t = it->second;
  if (c.dirty) {  // shapes set since the last run: plan them first (clears `executed`)
    OPFORGE_RETURN_IF_ERROR(const_cast<Impl&>(c).prepare());
  }
  if (c.executed) return c.dims[t];
  if (c.e->has_size_symbol[t])
    return Status::invalid("the shape of '" + name +
                           "' depends on data; it is known after execute()");
  return c.alloc_dims[t];
}

Result<Tensor> ExecutionContext::output(const std::string& name) const {
  const Impl& c = *impl_;
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end())
    return Status::notFound("no tensor named '" + name + "' in " + c.e->name);
  const int32_t t = it->second;
  const auto& pt = c.plan().tensors[t];
  if (!pt.is_output && pt.kind != plan::TensorKind::kInput)
    return Status::invalid("'" + name +
                           "' is not a network output (intermediate tensors are not kept)");
  if (!c.executed) return Status::invalid("no outputs yet: call execute() first");
  if (!c.cuda()) return Tensor{c.desc(t, c.dims[t]), c.tensorData(t), Device::kCpu};
  if (c.bound.count(t))
    return Status::invalid("'" + name +
                           "' is bound to device memory (setTensorAddress): read it there");
  if (pt.kind == plan::TensorKind::kInput)
    return Tensor{c.desc(t, c.dims[t]), c.staging.at(t)->data(), Device::kCpu};
  return Tensor{c.desc(t, c.dims[t]), c.staging.at(t)->data(), Device::kCpu};
}

Result<Tensor> ExecutionContext::deviceOutput(const std::string& name) const {
  const Impl& c = *impl_;
  if (!c.cuda()) return Status::invalid(c.e->name + " is a CPU plan; use output()");
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end())
    return Status::notFound("no tensor named '" + name + "' in " + c.e->name);
  const int32_t t = it->second;
  if (!c.plan().tensors[t].is_output)
    return Status::invalid("'" + name + "' is not a network output");
  if (!c.executed) return Status::invalid("no outputs yet: run the context first");
  return Tensor{c.desc(t, c.dims[t]), c.tensorData(t), Device::kCuda};
}

void ExecutionContext::setProfiling(bool on) {
  impl_->profiling = on;
}
void ExecutionContext::setUseCudaGraph(bool on) {
  impl_->use_graph = on;
  if (!on && impl_->graph) {
    impl_->dev->graphDestroy(impl_->graph);
    impl_->graph = nullptr;
  }
}
void ExecutionContext::setDebugPoison(bool on) {
  impl_->poison = on;
}
const RunTimes& ExecutionContext::lastRunTimes() const {
  return impl_->run_times;
}
const std::vector<LayerTime>& ExecutionContext::layerTimes() const {
  return impl_->times;
}
uint64_t ExecutionContext::activationBytes() const {
  return impl_->arena_bytes;
}

std::string Engine::inspect() const {
  const plan::Plan& p = impl_->plan;
  std::ostringstream os;
  os << "plan: " << name_ << "\n";
  os << "  producer: " << p.producer << ", built from " << p.source << "\n";
  os << "  backend: " << (impl_->cuda ? "cuda" : "cpu") << " (" << deviceDescription() << ")\n";
  os << "  weights: " << weightBytes() << " bytes\n";
  os << "inputs:\n";
  for (const auto& io : io_)
    if (io.is_input)
      os << "  " << io.name << " " << dtypeName(io.dtype) << io.shape
         << (io.format == Format::kHWC ? " HWC" : "") << "\n";
  os << "outputs:\n";
  for (const auto& io : io_)
    if (!io.is_input)
      os << "  " << io.name << " " << dtypeName(io.dtype) << io.shape
         << (io.format == Format::kHWC ? " HWC" : "") << "\n";
  for (size_t k = 0; k < p.profiles.size(); ++k) {
    os << "optimization profile " << k << ":\n";
    for (const auto& d : p.profiles[k])
      os << "  " << d.input << ": min " << dimsToString(d.min) << ", opt " << dimsToString(d.opt)
         << ", max " << dimsToString(d.max) << "\n";
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
      if (ok)
        os << "  activation memory at " << kPoint[point] << ": " << (*ctx)->activationBytes()
           << " bytes, workspace " << (*ctx)->impl_->workspace_bytes << " bytes\n";
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
