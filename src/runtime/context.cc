#include "runtime_impl.h"

namespace opforge {

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
  const shapes::Evaluator input_bindings = bindings;
  // Data-dependent sizes: allocate for their upper bound (sizes with none stay unbound).
  for (size_t k = 0; k < p.nodes.size(); ++k)
    OPFORGE_RETURN_IF_ERROR(
        bindings.bindSizes(label(k), p.nodes[k].size_tensors, shapes::Bound::kAllocation));
  alloc_bindings = bindings;
  // Assertions over a data-dependent size (this node's or an earlier one's: a Split of the rows a
  // NonZero found) are checked when the node runs (runLayers), with the size the data gave, not
  // its upper bound; those of an If branch's node when the branch runs.
  std::vector<std::string> sizes;
  for (const auto& n : p.nodes)
    for (const auto& s : n.size_tensors) sizes.push_back(s.symbol);
  std::vector<std::string> what(p.tensors.size());
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    for (const auto& a : n.guards.empty() ? n.assertions : std::vector<DimAssertion>{}) {
      if (!shapes::readsAnySize(a, sizes))
        OPFORGE_RETURN_IF_ERROR(bindings.check(label(k), a, shapes::Unbound::kSkip));
    }
    for (int32_t t : n.outputs) what[t] = label(k) + ": output '" + p.tensors[t].name + "'";
  }
  alloc_dims.assign(p.tensors.size(), {});
  storage_bytes.assign(p.storages.size(), 0);
  storage_is_input.assign(p.storages.size(), false);
  // Tensors sized by a size with no upper bound (their dims name a symbol still unbound): their
  // storages are allocated by the run (reserveDynamic).
  tensor_dynamic.assign(p.tensors.size(), false);
  storage_dynamic.assign(p.storages.size(), false);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& pt = p.tensors[t];
    if (!e->has_size_symbol[t] || pt.kind != plan::TensorKind::kActivation) continue;
    tensor_dynamic[t] = std::any_of(pt.dims.begin(), pt.dims.end(),
                                    [&](const DimExpr& d) { return bindings.namesUnbound(d); });
    if (tensor_dynamic[t]) storage_dynamic[pt.storage] = true;
  }
  if (std::find(storage_dynamic.begin(), storage_dynamic.end(), true) != storage_dynamic.end()) {
    opt_bindings = input_bindings;  // the run's fallback for bounds over sizes that did not run
    for (size_t k = 0; k < p.nodes.size(); ++k)
      OPFORGE_RETURN_IF_ERROR(
          opt_bindings.bindSizes(label(k), p.nodes[k].size_tensors, shapes::Bound::kUpper));
  }
  node_dynamic.assign(p.nodes.size(), false);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    for (int32_t t : p.nodes[k].inputs)
      node_dynamic[k] = node_dynamic[k] || (t >= 0 && tensor_dynamic[t]);
    for (int32_t t : p.nodes[k].outputs) node_dynamic[k] = node_dynamic[k] || tensor_dynamic[t];
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& pt = p.tensors[t];
    if (tensor_dynamic[t]) {
      alloc_dims[t].assign(pt.dims.size(), 0);  // until the run makes it: empty, of its rank
      continue;
    }
    auto d = bindings.dims(what[t].empty() ? "tensor '" + pt.name + "'" : what[t], pt.dims);
    if (!d) return d.status();
    // At most 2^40 elements, as at build time: a size tensor's upper bound comes from the plan, and
    // an edited one of 8.5e18 made the byte count saturate and the aligned size wrap to a few
    // bytes, which the kernel then overran (the plan fuzzer, issue 21).
    const auto count = checked::numel(*d);
    if (!count || *count > checked::kMaxElements)
      return Status::outOfRange(e->name + ": " +
                                (what[t].empty() ? "tensor '" + pt.name + "'" : what[t]) +
                                " would have shape " + dimsToString(*d) + " " + bindings.where() +
                                ": more than 2^40 elements, opforge's maximum");
    alloc_dims[t] = *d;
    if (pt.kind == plan::TensorKind::kConstant || storage_dynamic[pt.storage]) continue;
    size_t bytes = TensorDesc{pt.dtype, *d, pt.format}.bytes();
    if (pt.kind == plan::TensorKind::kInput) {
      storage_is_input[pt.storage] = true;
      if (dev->hostVisible()) continue;  // the input lives in its staging buffer (tensorData)
    }
    storage_bytes[pt.storage] =
        std::max(storage_bytes[pt.storage], alignUp(std::max<size_t>(bytes, 1), kArenaAlign));
  }
  // Every node's shape rule at these shapes (a plan's symbolic dims hide a tampered one until they
  // are numbers); a node behind an If guard is checked when it first runs (runLayers), a node
  // whose dims depend on a data-dependent size not at all (its buffers hold the upper bound).
  rule_checked.assign(p.nodes.size(), false);
  std::vector<int64_t> shape_key;
  for (int32_t t : p.inputs) {
    const auto& d = input_shapes.at(t);
    shape_key.push_back(static_cast<int64_t>(d.size()));
    shape_key.insert(shape_key.end(), d.begin(), d.end());
  }
  bool known_good;
  {
    std::lock_guard<std::mutex> lock(e->rule_mu);
    known_good = e->rule_ok.count(shape_key) > 0;
  }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    bool sized = !p.nodes[k].size_tensors.empty();
    for (int32_t t : p.nodes[k].inputs) sized |= t >= 0 && e->has_size_symbol[t];
    for (int32_t t : p.nodes[k].outputs) sized |= e->has_size_symbol[t];
    if (sized || (known_good && p.nodes[k].guards.empty())) rule_checked[k] = true;
    if (rule_checked[k] || !p.nodes[k].guards.empty()) continue;
    OPFORGE_RETURN_IF_ERROR(checkShapeRule(k, alloc_dims));
  }
  if (!known_good) {
    std::lock_guard<std::mutex> lock(e->rule_mu);
    if (e->rule_ok.size() < Engine::Impl::kRuleCacheSize) e->rule_ok.insert(std::move(shape_key));
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
    if (node_dynamic[k]) continue;  // the run asks its tactic when it knows the dims
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
  fixed_bytes = 0;
  if (memory_limit) {
    // Everything reserved below, summed before any of it is allocated (sizes saturate: a sum
    // that does not fit is over any cap). Tensors sized at run time count when they grow
    // (execute.cc, reserveDynamic).
    uint64_t need = 0;
    const auto add = [&](uint64_t n) {
      need = __builtin_add_overflow(need, n, &need) ? ~0ull : need;
    };
    add(total);
    add(workspace_bytes);
    for (int32_t t : p.inputs) add(desc(t, alloc_dims[t]).bytes());
    if (!dev->hostVisible())
      for (int32_t t : p.outputs)
        if (p.tensors[t].kind != plan::TensorKind::kInput) add(desc(t, alloc_dims[t]).bytes());
    if (need > memory_limit)
      return Status::outOfRange(e->name + ": these input shapes need " + std::to_string(need) +
                                " bytes of memory (activations " + std::to_string(total) +
                                ", workspace " + std::to_string(workspace_bytes) +
                                ", input and output copies); the context's limit is " +
                                std::to_string(memory_limit) + " bytes (setMemoryLimit)");
    fixed_bytes = need;
  }
  const auto reserve = [&](DeviceBuffer& b, size_t bytes, bool host, const std::string& what) {
    // At least one byte: an empty tensor still has an address (a null one means "no input").
    Status st = b.reserve(dev, std::max<size_t>(bytes, 1), host);
    return st ? st : st.withContext("memory for " + what + " of " + e->name);
  };
  OPFORGE_RETURN_IF_ERROR(reserve(arena, total, false, "the activations"));
  for (size_t i = 0; i < p.storages.size(); ++i) {
    if (!storage_dynamic[i]) continue;
    auto& b = dynamic_storage[static_cast<int32_t>(i)];
    if (!b) b = std::make_unique<DeviceBuffer>();
    OPFORGE_RETURN_IF_ERROR(reserve(*b, 1, false, "a tensor sized at run time"));
  }
  OPFORGE_RETURN_IF_ERROR(reserve(workspace, workspace_bytes, false, "the workspace"));
  for (int32_t t : p.inputs) {
    auto& b = staging[t];
    if (!b) b = std::make_unique<DeviceBuffer>();
    OPFORGE_RETURN_IF_ERROR(
        reserve(*b, desc(t, alloc_dims[t]).bytes(), true, "input '" + p.tensors[t].name + "'"));
  }
  if (!dev->hostVisible())  // host-visible devices: outputs are read where the layers wrote them
    for (int32_t t : p.outputs) {
      // An output sized at run time gets its staging buffer after the run (enqueue).
      if (p.tensors[t].kind == plan::TensorKind::kInput || tensor_dynamic[t]) continue;
      auto& b = staging[t];
      if (!b) b = std::make_unique<DeviceBuffer>();
      OPFORGE_RETURN_IF_ERROR(
          reserve(*b, desc(t, alloc_dims[t]).bytes(), true, "output '" + p.tensors[t].name + "'"));
    }
  OPFORGE_RETURN_IF_ERROR(
      reserve(readback, 64 * std::max<size_t>(1, p.nodes.size()), true, "size readbacks"));
  OPFORGE_RETURN_IF_ERROR(reserve(error_records,
                                  sizeof(DeviceErrorRecord) * std::max<size_t>(1, p.nodes.size()),
                                  true, "device error records"));
  std::memset(error_records.data(), 0, error_records.capacity());
  if (graph) {
    dev->graphDestroy(graph);
    graph = nullptr;
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
  if (bytes) std::memcpy(c.staging[t]->data(), data, bytes);
  c.inputs_written.insert(t);
  c.staged_inputs.insert(t);
  return Status::ok();
}

Status ExecutionContext::setTensorAddress(const std::string& name, void* device_ptr) {
  Impl& c = *impl_;
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
  if (c.bound.count(t))
    return Status::invalid("'" + name +
                           "' is bound to caller memory (setTensorAddress): read it there");
  if (pt.kind != plan::TensorKind::kInput && c.dev->hostVisible())
    return Tensor{c.desc(t, c.dims[t]), c.tensorData(t), Device::kCpu};
  return Tensor{c.desc(t, c.dims[t]), c.staging.at(t)->data(), Device::kCpu};
}

Result<Tensor> ExecutionContext::deviceOutput(const std::string& name) const {
  const Impl& c = *impl_;
  auto it = c.e->tensor_by_name.find(name);
  if (it == c.e->tensor_by_name.end())
    return Status::notFound("no tensor named '" + name + "' in " + c.e->name);
  const int32_t t = it->second;
  if (!c.plan().tensors[t].is_output)
    return Status::invalid("'" + name + "' is not a network output");
  if (!c.executed) return Status::invalid("no outputs yet: run the context first");
  return Tensor{c.desc(t, c.dims[t]), c.tensorData(t), c.dev->kind()};
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
void ExecutionContext::setMemoryLimit(uint64_t bytes) {
  impl_->memory_limit = bytes;
  impl_->dirty = true;  // the next use plans the memory again, against the new cap
}

Status ExecutionContext::Impl::checkShapeRule(size_t k,
                                              const std::vector<std::vector<int64_t>>& at) {
  const plan::Node& n = plan().nodes[k];
  rule_checked[k] = true;
  return rt::checkShapeRule(
      e->name + ": " + label(k) + " " + bindings.where(),
      "(a tampered or damaged plan, or one whose shape expressions do not hold at these shapes; "
      "rebuild it)",
      plan(), e->weights, n, *e->ops[k], e->attrs[k], [&](int32_t t) {
        std::vector<DimExpr> d;
        for (int64_t v : at[t]) d.emplace_back(v);
        return d;
      });
}

}  // namespace opforge
