#include <algorithm>
#include <cstring>

#include "opforge/combo.h"

#include "runtime_impl.h"

namespace opforge {

namespace {

// The library a plan records for an op defined in Python: "python:<module>" (opforge.plugin).
constexpr const char* kPythonOrigin = "python:";

// A loaded plan's node checked against its op, as the builder checked it when it made the node:
// the inputs against the schema (count, required inputs present), then the shape rule re-run on
// the plan's own tensor descriptions, whose outputs must be the plan's (count, dtype, dims).
// The shape rule is skipped only for a node whose shape-time value inputs are not constants of
// the plan (the builder knew them symbolically), or whose op's plans keep only some attributes
// (OpSchema::plan_attrs_only: Python JIT ops); the attribute check always runs.
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
  // Inputs the builder drops once the shape rule has used them (IoDef::shape_only; graph pass
  // shape_inputs): their kernels never read them, and without their values the shape rule cannot
  // be re-run here.
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const IoDef& decl = s.inputs[std::min(i, s.inputs.size() - 1)];
    if (n.inputs[i] >= 0) continue;
    if (!decl.optional && !decl.shape_only)
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
  // The tensors' types fit one of the op's combinations that the node's tactic serves, as the
  // builder chose it (fitCombo, opforge/combo.h): a kernel dispatches on its tensors' types, and an
  // INT64 input beside the FP32 constant of an FP32-only Mul read the constant as INT64, past its
  // bytes (plan fuzzer). Formats are not compared (they change no byte count).
  if (!s.combos.empty() && !s.inputs.empty()) {
    std::vector<ComboSlot> in(n.inputs.size()), out;
    std::string got;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] < 0) continue;
      const plan::Tensor& pt = p.tensors[n.inputs[i]];
      in[i] = {pt.dtype, pt.format, pt.dims.size()};
      got += (got.empty() ? "" : ", ") + dtypeName(pt.dtype);
    }
    for (size_t o = 0; o < n.outputs.size() && o < s.outputs.size(); ++o) {
      const plan::Tensor& pt = p.tensors[n.outputs[o]];
      out.push_back({pt.dtype, pt.format, pt.dims.size()});
      got += (got.empty() ? "" : ", ") + dtypeName(pt.dtype);
    }
    const int positions = static_cast<int>(s.inputs.size() + s.outputs.size());
    bool fits = false;
    for (const auto& c : s.combos) {
      auto ex = expandCombo(c, positions);
      if (!ex) return bad(ex.status().message());
      for (const ConcreteCombo& cc : *ex)
        fits = fits ||
               (fitCombo(s, cc, in, out, {}, {DataType::kFloat16, DataType::kBFloat16}).types &&
                (cc.tactic_ids.empty() || std::find(cc.tactic_ids.begin(), cc.tactic_ids.end(),
                                                    n.tactic) != cc.tactic_ids.end()));
    }
    if (!fits)
      return bad("its tensors are " + got + ", which no type combination of the op that tactic " +
                 std::to_string(n.tactic) + " (" + n.tactic_name + ") serves takes");
  }
  return rt::checkShapeRule(where, "(tampered or damaged plan; rebuild it)", p, weights, n, op,
                            attrs, [&](int32_t t) { return p.tensors[t].dims; });
}

}  // namespace

namespace rt {

namespace {

// Whether a tensor of `d` may have carried shape values when the plan was built (graph.cc and
// the ops' rules keep them for small integer and BOOL tensors, and sizes cast to FP32/FP64).
bool isInteger(DataType t) {
  return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16 ||
         t == DataType::kInt8 || t == DataType::kUInt64 || t == DataType::kUInt32 ||
         t == DataType::kUInt16 || t == DataType::kUInt8;
}

bool mayCarryValues(const SymDesc& d) {
  const bool typed = isInteger(d.dtype) || d.dtype == DataType::kBool ||
                     d.dtype == DataType::kFloat32 || d.dtype == DataType::kFloat64;
  if (!typed || d.dims.size() > 2) return false;
  int64_t numel = 1;
  for (const auto& e : d.dims) {
    if (!e.isConst() || e.constValue() < 0) return true;  // unknown here: keep it lenient
    if (__builtin_mul_overflow(numel, e.constValue(), &numel) || numel > 4096) return false;
  }
  return true;
}

// The output types where the values a rule needs are computed at run time: the rule re-run with
// zeros in their place (integer inputs of constant dims and at most 4096 elements),
// comparing the outputs' types only — dims follow the values, ONNX types never do. A plan that fed
// a Pad its own UINT64 input as pads and declared an FP32 output made the kernel write 8-byte
// elements into 4-byte ones (plan fuzzer). Where even zeros do not make the rule run (Expand's
// shape, Range's step), nothing more is checked here.
Status checkTypesWithZeros(const std::function<Status(const std::string&)>& bad,
                           const plan::Plan& p, const plan::Node& n, const RegisteredOp& op,
                           const AttrMap& attrs, std::vector<InferInput> ins,
                           const std::vector<size_t>& unknown) {
  std::vector<std::unique_ptr<TensorValue>> zeros;
  for (size_t i : unknown) {
    const SymDesc& d = ins[i].desc;
    if (!isInteger(d.dtype)) return Status::ok();
    int64_t numel = 1;
    for (const auto& e : d.dims) {
      if (!e.isConst() || e.constValue() < 0) return Status::ok();
      if (__builtin_mul_overflow(numel, e.constValue(), &numel) || numel > 4096)
        return Status::ok();
    }
    auto z = std::make_unique<TensorValue>();
    z->desc.dtype = d.dtype;
    for (const auto& e : d.dims) z->desc.dims.push_back(e.constValue());
    z->data.assign(static_cast<size_t>(numel) * dtypeSize(d.dtype), 0);
    ins[i].value = std::vector<DimExpr>(static_cast<size_t>(numel), DimExpr(int64_t{0}));
    ins[i].constant = z.get();
    zeros.push_back(std::move(z));
  }
  auto r = op.infer(n.name, attrs, ins, n.name + "#");
  // Zeros may not make the rule run, or may change an output count that follows the values: then
  // there is nothing to compare.
  if (!r || r->outputs.size() != n.outputs.size()) return Status::ok();
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    const plan::Tensor& pt = p.tensors[n.outputs[o]];
    if (r->outputs[o].dtype != pt.dtype)
      return bad("output " + std::to_string(o) + " ('" + pt.name + "') is " + dtypeName(pt.dtype) +
                 "; the op's shape rule gives " + dtypeName(r->outputs[o].dtype));
  }
  return Status::ok();
}

}  // namespace

Status checkShapeRule(const std::string& where, const std::string& hint, const plan::Plan& p,
                      const uint8_t* weights, const plan::Node& n, const RegisteredOp& op,
                      const AttrMap& attrs,
                      const std::function<std::vector<DimExpr>(int32_t)>& dims_of) {
  const OpSchema& s = op.schema();
  // Its plan keeps only the attributes its kernels read: the rule may need others.
  if (s.plan_attrs_only) return Status::ok();
  auto bad = [&](const std::string& why) {
    return Status::corrupt(where + ": " + why + " " + hint);
  };
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] < 0 && s.inputs[std::min(i, s.inputs.size() - 1)].shape_only)
      return Status::ok();  // a dropped shape input: the rule cannot run without its values
  std::vector<InferInput> ins(n.inputs.size());
  std::vector<std::unique_ptr<TensorValue>> consts;
  std::vector<size_t> unknown;  // value inputs computed at run time
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) continue;
    const plan::Tensor& pt = p.tensors[n.inputs[i]];
    ins[i].present = true;
    ins[i].desc = SymDesc::make(pt.dtype, dims_of(n.inputs[i]));
    if (!s.inputs[std::min(i, s.inputs.size() - 1)].value) continue;
    // As the builder's shape queries (graph.cc, inferInputs): a constant travels when it has at
    // most 65536 elements, its values when at most 4096 integers.
    if (pt.kind != plan::TensorKind::kConstant) {
      // Known only symbolically at build, if at all: run without it. Only a small tensor of rank
      // <= 2, integer or a size cast to FP32/FP64, carries shape values; a rule that fails with a
      // larger one left out fails for the plan's dims, not for want of its values (Transpose or
      // Min of activations, whose rules map shape values where there are any).
      if (mayCarryValues(ins[i].desc)) unknown.push_back(i);
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
  // re-run here for the dims; one that runs without them must give the plan's outputs.
  if (!r && !unknown.empty()) return checkTypesWithZeros(bad, p, n, op, attrs, ins, unknown);
  if (!r) return bad("its op's shape rule refuses it: " + r.status().message());
  if (r->outputs.size() != n.outputs.size())
    return bad("has " + std::to_string(n.outputs.size()) + " outputs; the shape rule gives " +
               std::to_string(r->outputs.size()));
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    const plan::Tensor& pt = p.tensors[n.outputs[o]];
    const std::vector<DimExpr> have = dims_of(n.outputs[o]);
    const SymDesc& want = r->outputs[o];
    bool same = want.dtype == pt.dtype && want.dims.size() == have.size();
    // A symbolic dimension may be equal in another form (a fused node's rule writes x.0*12 where
    // the builder kept 12*x.0, or a refined value): only two constants are compared, with the
    // dtype and the rank.
    for (size_t a = 0; same && a < have.size(); ++a)
      same = want.dims[a].sameAs(have[a]) || !(want.dims[a].isConst() && have[a].isConst());
    if (!same)
      return bad("output " + std::to_string(o) + " ('" + pt.name + "') is " + dtypeName(pt.dtype) +
                 toString(have) + "; the op's shape rule gives " + dtypeName(want.dtype) +
                 toString(want.dims));
  }
  return Status::ok();
}

}  // namespace rt

Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

Result<std::shared_ptr<Engine>> Engine::finishLoad(std::shared_ptr<Engine> e, const uint8_t* data,
                                                   size_t size) {
  Engine::Impl& im = *e->impl_;
  OPFORGE_ASSIGN_OR_RETURN(im.plan,
                           plan::deserialize(data, size, im.name, &im.weights, &im.weights_size));
  if (reinterpret_cast<uintptr_t>(im.weights) % plan::kWeightAlign != 0) {
    // Bytes the caller allocated (loadMemory) need not be aligned as the plan's weights are; the
    // kernels read constants as typed arrays, so they get a copy that is.
    if (!im.aligned_weights.reserve(im.weights_size))
      return Status::outOfRange(im.name + ": cannot allocate " + std::to_string(im.weights_size) +
                                " bytes for the plan's weights");
    if (im.weights_size) std::memcpy(im.aligned_weights.data(), im.weights, im.weights_size);
    im.weights = im.aligned_weights.data();
  }
  const plan::Plan& p = im.plan;
  im.cuda = p.backend == static_cast<int32_t>(Backend::kCuda);
  im.dev = rt::hostDevice();
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
      const bool py = n.library.rfind(kPythonOrigin, 0) == 0;
      missing.push_back(
          "  " + opKey(n) + " v" + n.version + " (node '" + n.name + "', " +
          (py ? "defined in Python by module " + n.library.substr(std::strlen(kPythonOrigin))
              : "from " + n.library + " when the plan was built") +
          ")");
      missing_libs.insert(n.library);
    }
  }
  if (!missing.empty()) {
    std::string msg = im.name + ": the plan needs " + std::to_string(missing.size()) +
                      " op(s) that no loaded library provides:\n";
    for (const auto& m : missing) msg += m + "\n";
    msg += "loaded libraries: " + im.registry->librariesSummary() + "\n";
    std::string libs, modules;
    for (const auto& l : missing_libs) {
      if (l.rfind(kPythonOrigin, 0) == 0)
        modules += (modules.empty() ? "" : ", ") + l.substr(std::strlen(kPythonOrigin));
      else
        libs += (libs.empty() ? "" : ", ") + l;
    }
    if (!modules.empty())
      msg +=
          "Ops defined in Python (JIT) run only in a Python process that imports their module (" +
          modules + "): opforge.Engine.load(plan, plugins=[\"" +
          modules.substr(0, modules.find(',')) +
          "\"]). An AOT build of such an op runs without Python.\n";
    if (!libs.empty())
      msg += "Load the library that defines them (" + libs +
             ") with --plugins=PATH, e.g. --plugins=build/lib/" + libs.substr(0, libs.find(',')) +
             ".";
    if (msg.back() == '\n') msg.pop_back();
    return Status::notFound(msg);
  }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    auto attrs = im.ops[k]->schema().plan_attrs_only ? im.ops[k]->validatePlanAttrs(n.name, n.attrs)
                                                     : im.ops[k]->validateAttrs(n.name, n.attrs);
    if (!attrs)
      return attrs.status().withContext(im.name +
                                        ": the op's definition changed since the plan was built");
    bool has_tactic = false;
    for (const auto& t : im.ops[k]->schema().tactics) has_tactic |= t.id == n.tactic;
    if (!has_tactic)
      return Status::notFound(im.name + ": node '" + n.name + "' uses tactic " +
                              std::to_string(n.tactic) + " (" + n.tactic_name + ") of " + opKey(n) +
                              ", which the loaded library (" + im.ops[k]->library().path +
                              ") does not have; rebuild the plan");
    // The op's attribute check runs when it is instantiated, before its shape rule is re-run on the
    // plan (a rule may rely on the check: blocksize 2^40 squared wrapped to 0, a division by zero):
    // an attribute edited past its limits is refused with the plan's name.
    auto inst = im.ops[k]->instantiate(n.name, *attrs);
    if (!inst) return inst.status().withContext(im.name);
    OPFORGE_RETURN_IF_ERROR(checkNodeAgainstOp(im.name, p, im.weights, n, *im.ops[k], *attrs));
    im.instances.push_back(std::move(*inst));
    im.attrs.push_back(std::move(*attrs));
    im.host_sync_needed |=
        !n.size_tensors.empty() || !n.guards.empty() ||
        (!im.dev->hostVisible() && n.backend == static_cast<int32_t>(Backend::kCpu));
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
  im.weights_dev = const_cast<uint8_t*>(im.weights);
  if (!im.dev->hostVisible() && im.weights_size) {
    // Weights go to the GPU once per engine.
    OPFORGE_RETURN_IF_ERROR(im.dev->malloc(&im.weights_dev, im.weights_size));
    im.weights_owned = true;
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
  std::vector<LayerInfo> out = layersOf(impl_->plan);
  for (size_t i = 0; i < out.size() && i < impl_->ops.size(); ++i)
    if (impl_->ops[i]) out[i].kind = impl_->ops[i]->schema().layerKind();
  return out;
}

Result<std::vector<LayerInfo>> Engine::planLayers(const std::vector<uint8_t>& bytes,
                                                  const std::string& name) {
  const uint8_t* weights = nullptr;
  size_t weights_size = 0;
  OPFORGE_ASSIGN_OR_RETURN(
      plan::Plan p, plan::deserialize(bytes.data(), bytes.size(), name, &weights, &weights_size));
  return layersOf(p);
}

std::vector<LayerInfo> Engine::layersOf(const plan::Plan& p) {
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
    for (const auto& [t, when] : n.guards)
      l.runs_when.push_back("'" + p.tensors[t].name + "' is " + (when ? "true" : "false"));
    out.push_back(std::move(l));
  }
  return out;
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
  // Layers whose dims name values read at run time (opforge::ReadValues, sizes with no upper
  // bound), as a context at the first profile's opt shapes finds them.
  std::vector<bool> run_sized(p.nodes.size(), false);
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
      if (ok && k == 0 && point == 1) run_sized = (*ctx)->impl_->node_dynamic;
      static const char* kPoint[] = {"min", "opt", "max"};
      if (ok)
        os << "  activation memory at " << kPoint[point] << ": " << (*ctx)->activationBytes()
           << " bytes, workspace " << (*ctx)->impl_->workspace_bytes << " bytes\n";
    }
  }
  {
    // Whether runs can be one CUDA graph replay: only when no layer makes the host wait.
    int sized = 0, guarded = 0, host = 0;
    for (const auto& n : p.nodes) {
      sized += !n.size_tensors.empty();
      guarded += !n.guards.empty();
      host += impl_->cuda && n.backend == static_cast<int32_t>(Backend::kCpu);
    }
    os << "cuda graph: ";
    if (!impl_->cuda)
      os << "n/a (a CPU plan)\n";
    else if (!impl_->host_sync_needed)
      os << "yes (runs from the second on replay one graph)\n";
    else
      os << "no: the host reads " << sized << " layer(s)' data-dependent sizes, " << guarded
         << " layer(s) of If branches wait for their condition, " << host
         << " layer(s) run on the CPU\n";
    const auto n_run_sized = std::count(run_sized.begin(), run_sized.end(), true);
    if (n_run_sized > 0)
      os << "sized at run time: " << n_run_sized
         << " layer(s) (marked below): their dims name values the run reads (a dim 'L#i-"
         << (int64_t{1} << 40) << "' is the i-th value layer L reads); the run allocates their "
         << "tensors and asks their tactic at the dims it finds\n";
  }
  os << "layers (" << p.nodes.size() << "):\n";
  int k = 0;
  for (const auto& l : layers()) {
    os << "  [" << k++ << "] " << l.name << "  " << l.op << "  (" << l.library << ")\n";
    os << "      combination: " << l.combo << "   tactic: " << l.tactic;
    if (l.build_time_ms >= 0) os << "   time at build: " << l.build_time_ms << " ms";
    os << "   workspace: " << l.workspace << " bytes\n";
    if (run_sized[k - 1]) os << "      sized at run time\n";
    if (!l.runs_when.empty()) {
      os << "      runs when:";
      for (size_t i = 0; i < l.runs_when.size(); ++i) os << (i ? " and " : " ") << l.runs_when[i];
      os << " (an If branch, or a Loop iteration run only when the data asks)\n";
    }
    for (const auto& i : l.inputs) os << "      in:  " << i << "\n";
    for (const auto& o : l.outputs) os << "      out: " << o << "\n";
  }
  return os.str();
}

}  // namespace opforge
