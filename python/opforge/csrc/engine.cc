// opforge._C: the engine for Python — ONNX import + Builder -> plan bytes, Engine (plan loaded),
// ExecutionContext (shapes, host inputs/outputs, device addresses, enqueue on a stream). Memory
// crosses as integer addresses: NumPy arrays' and PyTorch tensors' data pointers.
#include <fstream>
#include <iterator>
#include <mutex>

#include "common.h"
#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/network_edit.h"
#include "opforge/runtime.h"

namespace opforge::py_glue {

namespace {

std::vector<int64_t> dimsOf(const py::handle& h) {
  return h.cast<std::vector<int64_t>>();
}

class PyContext;

class PyEngine {
 public:
  PyEngine(std::shared_ptr<Engine> e, std::vector<uint8_t> bytes, std::vector<std::string> log)
      : e_(std::move(e)), bytes_(std::move(bytes)), log_(std::move(log)) {}

  // The builder's configuration from the Python arguments; the build log is collected in *log.
  static BuilderConfig config(const py::list& profiles, int backend, bool fp16, bool bf16,
                              bool tf32, const std::string& timing_cache, bool constant_folding,
                              bool verbose, const std::vector<std::string>& layer_tactics,
                              std::shared_ptr<std::vector<std::string>> log) {
    BuilderConfig cfg;
    for (auto p : profiles) {
      OptimizationProfile prof;
      for (auto [k, v] : p.cast<py::dict>()) {
        auto t = v.cast<py::sequence>();
        if (t.size() != 3)
          raise(Status::invalid("profile entry for '" + k.cast<std::string>() +
                                "' must be (min, opt, max)"));
        prof.set(k.cast<std::string>(), dimsOf(t[0]), dimsOf(t[1]), dimsOf(t[2]));
      }
      cfg.profiles.push_back(std::move(prof));
    }
    cfg.backend = static_cast<Backend>(backend);
    cfg.fp16 = fp16;
    cfg.bf16 = bf16;
    cfg.tf32 = tf32;
    cfg.layer_tactics = layer_tactics;
    cfg.timing_cache_file = timing_cache;
    cfg.constant_folding = constant_folding;
    cfg.verbose = verbose;
    auto mu = std::make_shared<std::mutex>();
    cfg.log = [log, mu](const std::string& m) {
      std::lock_guard<std::mutex> lock(*mu);
      log->push_back(m);
    };
    return cfg;
  }

  // Builds `net` (imported from ONNX, or made with the network API) and loads the plan.
  static PyEngine buildNet(const NetworkDefinition& net, const BuilderConfig& cfg,
                           const std::string& name,
                           const std::shared_ptr<std::vector<std::string>>& log) {
    Result<std::vector<uint8_t>> plan = Status::internal("not built");
    Result<std::shared_ptr<Engine>> engine = Status::internal("not loaded");
    {
      py::gil_scoped_release nogil;
      Builder b(Registry::global());
      plan = b.buildSerializedNetwork(net, cfg);
      if (plan) engine = Engine::loadMemory(*plan, name + " (built)", Registry::global());
    }
    if (!plan) raise(plan.status());
    if (!engine) raise(engine.status());
    return PyEngine(std::move(engine).value(), std::move(plan).value(), *log);
  }

  // Imports `onnx_path`, builds a plan with `profiles` ([{input: (min, opt, max)}]) and loads it.
  static PyEngine build(const std::string& onnx_path, const py::list& profiles, int backend,
                        bool fp16, bool bf16, bool tf32, const std::string& timing_cache,
                        bool constant_folding, bool strict_attributes, bool verbose,
                        const std::vector<std::string>& layer_tactics, int max_loop_iterations) {
    auto log = std::make_shared<std::vector<std::string>>();
    BuilderConfig cfg = config(profiles, backend, fp16, bf16, tf32, timing_cache, constant_folding,
                               verbose, layer_tactics, log);
    OnnxImportOptions opts;
    opts.strict_attributes = strict_attributes;
    opts.max_dynamic_loop_iterations = max_loop_iterations;
    Result<NetworkDefinition> net = Status::internal("not imported");
    {
      py::gil_scoped_release nogil;
      net = importOnnx(onnx_path, Registry::global(), opts);
    }
    if (!net) raise(net.status());
    return buildNet(*net, cfg, onnx_path, log);
  }

  // Builds a network made with the network API (opforge.Network).
  static PyEngine buildNetwork(const NetworkDefinition& net, const py::list& profiles, int backend,
                               bool fp16, bool bf16, bool tf32, const std::string& timing_cache,
                               bool constant_folding, bool verbose,
                               const std::vector<std::string>& layer_tactics) {
    auto log = std::make_shared<std::vector<std::string>>();
    BuilderConfig cfg = config(profiles, backend, fp16, bf16, tf32, timing_cache, constant_folding,
                               verbose, layer_tactics, log);
    return buildNet(net, cfg, net.source(), log);
  }

  static PyEngine loadFile(const std::string& path) {
    std::vector<uint8_t> bytes;
    {
      std::ifstream f(path, std::ios::binary);
      if (!f) raise(Status::io("cannot open plan file '" + path + "'"));
      bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    return loadBytes(py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
  }

  static PyEngine loadBytes(const py::bytes& data, const std::string& name) {
    std::string_view sv = data;
    std::vector<uint8_t> bytes(sv.begin(), sv.end());
    Result<std::shared_ptr<Engine>> e = Status::internal("not loaded");
    {
      py::gil_scoped_release nogil;
      e = Engine::loadMemory(bytes, name, Registry::global());
    }
    return PyEngine(unwrap(std::move(e)), std::move(bytes), {});
  }

  void save(const std::string& path) const { check(writeFileAtomic(path, bytes_)); }
  py::bytes serialize() const {
    return py::bytes(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
  }

  py::list ioTensors() const {
    py::list l;
    for (const auto& io : e_->ioTensors()) {
      py::dict d;
      d["name"] = io.name;
      d["is_input"] = io.is_input;
      d["dtype"] = static_cast<int>(io.dtype);
      d["format"] = formatName(io.format);
      d["shape"] = io.shape;
      d["dims"] = io.dims;
      l.append(d);
    }
    return l;
  }

  py::list layers() const {
    py::list l;
    for (const auto& li : e_->layers()) {
      py::dict d;
      d["name"] = li.name;
      d["op"] = li.op;
      d["combo"] = li.combo;
      d["tactic"] = li.tactic;
      d["kind"] = li.kind;
      d["library"] = li.library;
      d["inputs"] = li.inputs;
      d["outputs"] = li.outputs;
      d["workspace"] = li.workspace;
      d["build_time_ms"] = li.build_time_ms;
      l.append(d);
    }
    return l;
  }

  py::object profileShapes(int profile, const std::string& input) const {
    auto r = unwrap(e_->profileShapes(profile, input));
    if (r.empty() || r[0].empty()) return py::none();
    return py::make_tuple(r[0], r[1], r[2]);
  }

  std::shared_ptr<Engine> engine() const { return e_; }
  const std::vector<std::string>& log() const { return log_; }

 private:
  std::shared_ptr<Engine> e_;
  std::vector<uint8_t> bytes_;
  std::vector<std::string> log_;
};

class PyContext {
 public:
  explicit PyContext(const PyEngine& e) : e_(e.engine()) {
    Result<std::unique_ptr<ExecutionContext>> c = Status::internal("not created");
    {
      py::gil_scoped_release nogil;
      c = e_->createExecutionContext();
    }
    c_ = unwrap(std::move(c));
  }

  void setInputShape(const std::string& name, const std::vector<int64_t>& dims) {
    check(c_->setInputShape(name, dims));
  }
  void setInput(const std::string& name, uintptr_t data, uint64_t bytes) {
    Status st;
    {
      py::gil_scoped_release nogil;
      st = c_->setInput(name, reinterpret_cast<const void*>(data), bytes);
    }
    check(st);
  }
  void setTensorAddress(const std::string& name, uintptr_t ptr) {
    check(c_->setTensorAddress(name, reinterpret_cast<void*>(ptr)));
  }
  void execute() {
    Status st;
    {
      py::gil_scoped_release nogil;
      st = c_->execute();
    }
    check(st);
  }
  void enqueue(uintptr_t stream) {
    Status st;
    {
      py::gil_scoped_release nogil;
      st = c_->enqueue(reinterpret_cast<void*>(stream));
    }
    check(st);
  }
  void synchronize() {
    Status st;
    {
      py::gil_scoped_release nogil;
      st = c_->synchronize();
    }
    check(st);
  }
  std::vector<int64_t> shape(const std::string& name) const { return unwrap(c_->shape(name)); }
  // (dtype, dims) of an output after the run (host copy for CUDA plans).
  py::tuple outputDesc(const std::string& name) const {
    Tensor t = unwrap(c_->output(name));
    return py::make_tuple(static_cast<int>(t.desc.dtype), t.desc.dims);
  }
  // Copies an output into `bytes` of caller memory at `dst`.
  void copyOutput(const std::string& name, uintptr_t dst, uint64_t bytes) const {
    Tensor t = unwrap(c_->output(name));
    if (bytes != t.bytes())
      raise(Status::invalid("output '" + name + "' is " + describe(t.desc) + " = " +
                            std::to_string(t.bytes()) + " bytes; the destination holds " +
                            std::to_string(bytes)));
    py::gil_scoped_release nogil;
    if (bytes) std::memcpy(reinterpret_cast<void*>(dst), t.data, bytes);
  }
  // (dtype, dims, device address) of an output in device memory (CUDA plans).
  py::tuple deviceOutput(const std::string& name) const {
    Tensor t = unwrap(c_->deviceOutput(name));
    return py::make_tuple(static_cast<int>(t.desc.dtype), t.desc.dims,
                          reinterpret_cast<uintptr_t>(t.data));
  }
  py::dict lastRunTimes() const {
    const RunTimes& r = c_->lastRunTimes();
    py::dict d;
    d["h2d_ms"] = r.h2d_ms;
    d["compute_ms"] = r.compute_ms;
    d["d2h_ms"] = r.d2h_ms;
    d["cuda_graph"] = r.cuda_graph;
    return d;
  }
  py::list layerTimes() const {
    py::list l;
    for (const auto& t : c_->layerTimes()) l.append(py::make_tuple(t.name, t.ms, t.start_ms));
    return l;
  }
  ExecutionContext& ctx() { return *c_; }

 private:
  std::shared_ptr<Engine> e_;  // outlives the context
  std::unique_ptr<ExecutionContext> c_;
};

// opforge.Network's native half: a NetworkDefinition whose tensors travel as integer ids.
class PyNetwork {
 public:
  PyNetwork() : net_(Registry::global()) { net_.setSource("<python network>"); }
  explicit PyNetwork(NetworkDefinition n) : net_(std::move(n)) {}
  const NetworkDefinition& net() const { return net_; }

  // An ONNX file imported into a network (Engine.build lowers its Python ops before building).
  static PyNetwork importFile(const std::string& path, bool strict_attributes,
                              int max_loop_iterations) {
    OnnxImportOptions opts;
    opts.strict_attributes = strict_attributes;
    opts.max_dynamic_loop_iterations = max_loop_iterations;
    Result<NetworkDefinition> net = Status::internal("not imported");
    {
      py::gil_scoped_release nogil;
      net = importOnnx(path, Registry::global(), opts);
    }
    return PyNetwork(unwrap(std::move(net)));
  }
  PyNetwork clone() const { return PyNetwork(cloneNetwork(net_)); }
  py::dict node(int index) const {
    NodeInfo n = unwrap(networkNode(net_, index));
    py::dict d;
    d["name"] = n.name;
    d["op"] = n.op;
    d["version"] = n.version;
    d["library"] = n.library;
    py::dict attrs;
    for (const auto& [k, v] : n.attrs.all()) attrs[py::str(k)] = attrToPy(v);
    d["attrs"] = attrs;
    py::list ins, outs;
    for (const auto& t : n.inputs) ins.append(t.valid() ? py::object(py::int_(t.id)) : py::none());
    for (const auto& t : n.outputs) outs.append(t.id);
    d["inputs"] = ins;
    d["outputs"] = outs;
    return d;
  }
  std::vector<DimExpr> dimsOf(int t) const { return networkDims(net_, TensorRef{t}); }
  void replaceNode(int index, const std::string& key, const py::dict& attrs,
                   const std::string& version) {
    check(opforge::replaceNode(net_, index, key, attrsFor(key, version, attrs, "replace_node"),
                               version));
  }

  int addInput(const std::string& name, int dtype, const std::vector<int64_t>& dims,
               const std::string& format) {
    auto f = parseFormat(format);
    if (!f)
      raise(Status::invalid("network: input '" + name + "': unknown format '" + format +
                            "' (LINEAR or HWC)"));
    return unwrap(net_.addInput(name, static_cast<DataType>(dtype), dims, *f)).id;
  }
  // inputs: tensor ids, None for an omitted optional input; attrs: {name: Python value}, each
  // converted to the type the op declares.
  std::vector<int> addOp(const std::string& key, const py::list& inputs, const py::dict& attrs,
                         const std::string& name, const std::string& version) {
    std::vector<TensorRef> ins;
    for (auto h : inputs) ins.push_back(h.is_none() ? TensorRef{} : TensorRef{h.cast<int>()});
    Attrs a = attrsFor(key, version, attrs, "node '" + name + "'");
    std::vector<int> out;
    for (const auto& t : unwrap(net_.addOp(key, ins, a, name, version))) out.push_back(t.id);
    return out;
  }
  // {name: Python value} converted to the types op `key` declares.
  static Attrs attrsFor(const std::string& key, const std::string& version, const py::dict& attrs,
                        const std::string& name) {
    const RegisteredOp* op = Registry::global()->find(key, version);
    if (!op)
      raise(Status::notFound("network: no op " + key + " v" + version + " is registered (" +
                             Registry::global()->librariesSummary() + ")"));
    Attrs a;
    for (auto [k, v] : attrs) {
      const std::string an = k.cast<std::string>();
      const AttrDef* def = nullptr;
      for (const auto& d : op->schema().attrs)
        if (d.name == an) def = &d;
      if (!def) {
        std::string known;
        for (const auto& d : op->schema().attrs) known += (known.empty() ? "" : ", ") + d.name;
        raise(Status::invalid("network: " + name + " (" + key + "): unknown attribute '" + an +
                              "' (the op's attributes: " + (known.empty() ? "none" : known) + ")"));
      }
      a[an] = attrFromPy(*def, v);
    }
    return a;
  }
  void markOutput(int t, const std::string& name) { check(net_.markOutput(TensorRef{t}, name)); }
  std::string tensorName(int t) const { return net_.tensorName(TensorRef{t}); }
  std::string shapeOf(int t) const { return net_.shapeOf(TensorRef{t}); }
  int dtypeOf(int t) const { return static_cast<int>(net_.dtypeOf(TensorRef{t})); }

 private:
  NetworkDefinition net_;
};

}  // namespace

void bindEngine(py::module_& m) {
  py::class_<PyNetwork>(m, "Network")
      .def(py::init<>())
      .def("add_input", &PyNetwork::addInput, py::arg("name"), py::arg("dtype"), py::arg("dims"),
           py::arg("format") = "LINEAR")
      .def("add_op", &PyNetwork::addOp, py::arg("key"), py::arg("inputs"), py::arg("attrs"),
           py::arg("name") = "", py::arg("version") = "1")
      .def("mark_output", &PyNetwork::markOutput, py::arg("tensor"), py::arg("name") = "")
      .def("tensor_name", &PyNetwork::tensorName, py::arg("tensor"))
      .def("shape_of", &PyNetwork::shapeOf, py::arg("tensor"))
      .def("dtype_of", &PyNetwork::dtypeOf, py::arg("tensor"))
      .def("input_names", [](const PyNetwork& n) { return n.net().inputNames(); })
      .def("output_names", [](const PyNetwork& n) { return n.net().outputNames(); })
      .def("num_nodes", [](const PyNetwork& n) { return n.net().numNodes(); })
      .def_static("import_onnx", &PyNetwork::importFile, py::arg("path"),
                  py::arg("strict_attributes") = false, py::arg("max_loop_iterations") = 64)
      .def("clone", &PyNetwork::clone)
      .def("node", &PyNetwork::node, py::arg("index"))
      .def("dims_of", &PyNetwork::dimsOf, py::arg("tensor"))
      .def("replace_node", &PyNetwork::replaceNode, py::arg("index"), py::arg("key"),
           py::arg("attrs"), py::arg("version") = "1");

  py::class_<PyEngine>(m, "Engine")
      .def_static("build", &PyEngine::build, py::arg("onnx_path"), py::arg("profiles"),
                  py::arg("backend"), py::arg("fp16") = false, py::arg("bf16") = false,
                  py::arg("tf32") = true, py::arg("timing_cache") = "",
                  py::arg("constant_folding") = true, py::arg("strict_attributes") = false,
                  py::arg("verbose") = false, py::arg("layer_tactics") = std::vector<std::string>{},
                  py::arg("max_loop_iterations") = 64)
      .def_static(
          "build_network",
          [](const PyNetwork& n, const py::list& profiles, int backend, bool fp16, bool bf16,
             bool tf32, const std::string& timing_cache, bool constant_folding, bool verbose,
             const std::vector<std::string>& layer_tactics) {
            return PyEngine::buildNetwork(n.net(), profiles, backend, fp16, bf16, tf32,
                                          timing_cache, constant_folding, verbose, layer_tactics);
          },
          py::arg("network"), py::arg("profiles"), py::arg("backend"), py::arg("fp16") = false,
          py::arg("bf16") = false, py::arg("tf32") = true, py::arg("timing_cache") = "",
          py::arg("constant_folding") = true, py::arg("verbose") = false,
          py::arg("layer_tactics") = std::vector<std::string>{})
      .def_static("load_file", &PyEngine::loadFile, py::arg("path"))
      .def_static("load_bytes", &PyEngine::loadBytes, py::arg("data"), py::arg("name") = "<memory>")
      .def("save", &PyEngine::save, py::arg("path"))
      .def("serialize", &PyEngine::serialize)
      .def("io_tensors", &PyEngine::ioTensors)
      .def("layers", &PyEngine::layers)
      .def("inspect", [](const PyEngine& e) { return e.engine()->inspect(); })
      .def("backend",
           [](const PyEngine& e) {
             return e.engine()->backend() == Backend::kCuda ? "cuda" : "cpu";
           })
      .def("device_description", [](const PyEngine& e) { return e.engine()->deviceDescription(); })
      .def("num_profiles", [](const PyEngine& e) { return e.engine()->numProfiles(); })
      .def("profile_shapes", &PyEngine::profileShapes, py::arg("profile"), py::arg("input"))
      .def("weight_bytes", [](const PyEngine& e) { return e.engine()->weightBytes(); })
      .def("name", [](const PyEngine& e) { return e.engine()->name(); })
      .def("build_log", &PyEngine::log)
      .def("create_context", [](const PyEngine& e) { return std::make_unique<PyContext>(e); });

  py::class_<PyContext>(m, "ExecutionContext")
      .def("set_optimization_profile",
           [](PyContext& c, int i) { check(c.ctx().setOptimizationProfile(i)); })
      .def("optimization_profile", [](PyContext& c) { return c.ctx().optimizationProfile(); })
      .def("set_input_shape", &PyContext::setInputShape, py::arg("name"), py::arg("dims"))
      .def("set_input", &PyContext::setInput, py::arg("name"), py::arg("address"),
           py::arg("nbytes"))
      .def("set_tensor_address", &PyContext::setTensorAddress, py::arg("name"), py::arg("address"))
      .def("execute", &PyContext::execute)
      .def("enqueue", &PyContext::enqueue, py::arg("stream") = 0)
      .def("synchronize", &PyContext::synchronize)
      .def("shape", &PyContext::shape, py::arg("name"))
      .def("output_desc", &PyContext::outputDesc, py::arg("name"))
      .def("copy_output", &PyContext::copyOutput, py::arg("name"), py::arg("address"),
           py::arg("nbytes"))
      .def("device_output", &PyContext::deviceOutput, py::arg("name"))
      .def("set_use_cuda_graph", [](PyContext& c, bool on) { c.ctx().setUseCudaGraph(on); })
      .def("set_debug_poison", [](PyContext& c, bool on) { c.ctx().setDebugPoison(on); })
      .def("set_profiling", [](PyContext& c, bool on) { c.ctx().setProfiling(on); })
      .def("last_run_times", &PyContext::lastRunTimes)
      .def("layer_times", &PyContext::layerTimes)
      .def("activation_bytes", [](PyContext& c) { return c.ctx().activationBytes(); });
}

}  // namespace opforge::py_glue
