#include "runtime_impl.h"

#include <optional>

namespace opforge {

uint64_t ExecutionContext::Impl::graphKey() const {
  uint64_t h = reinterpret_cast<uintptr_t>(arena.data()) ^
               (reinterpret_cast<uintptr_t>(workspace.data()) << 1);
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
  OPFORGE_RETURN_IF_ERROR(host_workspace.reserve(node_workspace[k])
                              ? Status::ok()
                              : Status::runtime("out of host memory"));
  OPFORGE_RETURN_IF_ERROR(
      e->instances[k]->run(n.tactic, hin, hout, host_workspace.data(), node_workspace[k], nullptr));
  for (size_t o = 0; o < outs.size(); ++o)
    OPFORGE_RETURN_IF_ERROR(dev->memcpyAsync(outs[o].data, hout[o].data, outs[o].bytes(),
                                             rt::CopyKind::kHostToDevice, stream));
  return Status::ok();
}

Status ExecutionContext::Impl::reserveDynamic(int32_t t, const std::vector<int64_t>& d,
                                              void* stream) {
  // A tensor sized at run time (its dims name a size with no upper bound): its storage grows to
  // hold it. Growing frees the old buffer, which work queued before may still use: wait first
  // (such plans synchronize to read their sizes anyway).
  const int32_t s = plan().tensors[t].storage;
  DeviceBuffer& b = *dynamic_storage.at(s);
  // At most 2^40 elements, as every tensor the memory plan sizes (prepare).
  const auto count = checked::numel(d);
  if (!count || *count > checked::kMaxElements)
    return Status::outOfRange(e->name + ": '" + plan().tensors[t].name + "' would have shape " +
                              dimsToString(d) +
                              " in this run: more than 2^40 elements, opforge's "
                              "maximum");
  const size_t bytes = std::max<size_t>(desc(t, d).bytes(), 1);
  const bool first = !dynamic_made[s];  // the storage's first tensor in this run
  dynamic_made[s] = true;
  if (bytes > b.capacity()) {
    // A later tensor of the storage (in place, a view) holds what an earlier one wrote.
    if (!first)
      return Status::internal("'" + plan().tensors[t].name + "' " + dimsToString(d) +
                              " needs more bytes than the tensor before it in its storage");
    if (memory_limit) {
      // setMemoryLimit caps these too: what prepare reserved, the other run-time sized storages
      // as they are, and this one grown.
      uint64_t need = fixed_bytes + alignUp(bytes, kArenaAlign);
      for (const auto& [other, buf] : dynamic_storage)
        if (other != s && buf) need += buf->capacity();
      if (need > memory_limit)
        return Status::outOfRange(e->name + ": '" + plan().tensors[t].name + "' " +
                                  dimsToString(d) + " needs " + std::to_string(bytes) +
                                  " bytes in this run, which brings the context's memory to " +
                                  std::to_string(need) + " bytes; its limit is " +
                                  std::to_string(memory_limit) + " bytes (setMemoryLimit)");
    }
    OPFORGE_RETURN_IF_ERROR(dev->streamSynchronize(stream));
    Status st = b.reserve(dev, alignUp(bytes, kArenaAlign), false);
    if (!st)
      return st.withContext("memory for '" + plan().tensors[t].name + "' " + dimsToString(d) +
                            " of " + e->name);
  }
  if (first && poison) OPFORGE_RETURN_IF_ERROR(dev->memsetAsync(b.data(), 0xff, bytes, stream));
  return Status::ok();
}

Result<bool> ExecutionContext::Impl::guardsHold(size_t k, void* stream) {
  for (const auto& [t, when] : plan().nodes[k].guards) {
    auto it = guard_values.find(t);
    if (it == guard_values.end()) {
      // The condition is one BOOL element, on the device: read it (a host sync, as for sizes).
      uint8_t* rb = readback.data();
      OPFORGE_RETURN_IF_ERROR(
          dev->memcpyAsync(rb, tensorData(t), 1, rt::CopyKind::kDeviceToHost, stream));
      OPFORGE_RETURN_IF_ERROR(dev->streamSynchronize(stream));
      it = guard_values.emplace(t, *rb != 0).first;
    }
    if (it->second != when) return false;
  }
  return true;
}

Status ExecutionContext::Impl::runLayers(void* stream, bool capturing) {
  const plan::Plan& p = plan();
  bindInputs();
  dims = alloc_dims;
  if (profiling && !capturing) {
    while (layer_ev.size() < p.nodes.size() + 1) {
      void* x = nullptr;
      OPFORGE_RETURN_IF_ERROR(dev->eventCreate(&x));
      layer_ev.push_back(x);
    }
  }
  times.clear();
  guard_values.clear();
  dynamic_made.assign(p.storages.size(), false);
  const Device where = dev->kind();
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& n = p.nodes[k];
    if (!n.guards.empty()) {
      // A layer of an If branch not taken: skipped (its outputs keep their allocation shapes;
      // only the branch's IfSelect reads them, and it copies the branch taken).
      OPFORGE_ASSIGN_OR_RETURN(bool runs, guardsHold(k, stream));
      if (!runs) {
        if (!layer_ev.empty() && profiling && !capturing)
          OPFORGE_RETURN_IF_ERROR(dev->eventRecord(layer_ev[k], stream));
        continue;
      }
    }
    if (!rule_checked[k]) OPFORGE_RETURN_IF_ERROR(checkShapeRule(k, dims));
    // An assertion over this node's own data-dependent size is skipped (not bound yet).
    if (!n.assertions.empty())
      OPFORGE_RETURN_IF_ERROR(bindings.checkAll(label(k), n.assertions, shapes::Unbound::kSkip));
    std::vector<Tensor> ins, outs;
    for (int32_t t : n.inputs)
      ins.push_back(t < 0 ? Tensor{} : Tensor{desc(t, dims[t]), tensorData(t), where});
    std::optional<shapes::Evaluator> at_upper;  // this node's own sizes at their upper bound
    for (int32_t t : n.outputs) {
      if (e->has_size_symbol[t]) {
        // Outputs sized by this node's own data-dependent size get their upper bound.
        const shapes::Evaluator* ev = &bindings;
        if (!n.size_tensors.empty()) {
          if (!at_upper) {
            // The bounds buffers were sized for (an upper bound may name a size of an If branch
            // that did not run); a bound over sizes with none is evaluated now: over the bounds
            // other buffers were sized for, the values this run gave the sizes with none, and a
            // size of a branch that did not run at the opt value the builder gave it.
            at_upper = bindings;
            for (const auto& s : n.size_tensors) {
              if (auto u = alloc_bindings.value(s.symbol)) {
                at_upper->bind(s.symbol, *u);
              } else if (!shapes::unbounded(s)) {
                auto u = s.upper.eval([&](const std::string& sym) {
                  auto v = alloc_bindings.value(sym);
                  if (!v) v = bindings.value(sym);
                  return v ? v : opt_bindings.value(sym);
                });
                if (!u)
                  return u.status().withContext(label(k) + ": the upper bound of size tensor '" +
                                                s.symbol + "'");
                at_upper->bind(s.symbol, *u);
              }
            }
          }
          ev = &*at_upper;
        }
        OPFORGE_ASSIGN_OR_RETURN(dims[t],
                                 ev->outputDims(label(k), p.tensors[t].name, p.tensors[t].dims));
      }
      if (tensor_dynamic[t]) OPFORGE_RETURN_IF_ERROR(reserveDynamic(t, dims[t], stream));
      outs.push_back(Tensor{desc(t, dims[t]), tensorData(t), where});
    }
    if (node_dynamic[k]) {
      // Dims known only now: the tactic must apply to them, and the workspace hold its scratch.
      std::vector<TensorDesc> din, dout;
      for (const auto& x : ins) din.push_back(x.desc);
      for (const auto& x : outs) dout.push_back(x.desc);
      size_t ws = 0;
      if (!e->instances[k]->tacticApplies(n.tactic, din, dout, &ws))
        return Status::runtime("node '" + n.name + "' (" + opKey(n) + "): tactic " +
                               std::to_string(n.tactic) + " (" + n.tactic_name +
                               ") does not apply to the shapes this run gave it");
      if (ws > workspace.capacity()) {
        OPFORGE_RETURN_IF_ERROR(dev->streamSynchronize(stream));
        OPFORGE_RETURN_IF_ERROR(workspace.reserve(dev, ws, false));
      }
      node_workspace[k] = ws;
    }
    if (!layer_ev.empty() && profiling && !capturing)
      OPFORGE_RETURN_IF_ERROR(dev->eventRecord(layer_ev[k], stream));
    // A layer whose outputs are all empty has nothing to write: its kernel is not called (kernels
    // sized scratch by an axis beside an empty one: Softmax over [0, 2^31 - 1] asked for 16 GiB,
    // a fuzzer finding). Data-dependent sizes are read from outputs, so such layers still run.
    if (n.size_tensors.empty() && !outs.empty() &&
        std::all_of(outs.begin(), outs.end(), [](const Tensor& t) { return t.numel() == 0; }))
      continue;
    Status st;
    const KernelInstance& inst = *e->instances[k];
    const bool cpu_layer = n.backend == static_cast<int32_t>(Backend::kCpu);
    if (cpu_layer && !dev->hostVisible()) {
      st = runFallback(k, ins, outs, stream);
    } else {
      // A CPU tactic runs on the host, with no stream; a device tactic gets its error record.
      st = inst.run(n.tactic, ins, outs, workspace.data(), node_workspace[k],
                    cpu_layer ? nullptr : stream, cpu_layer ? nullptr : errorRecord(k));
      if (st && sync_each_layer && !capturing) st = dev->streamSynchronize(stream);
    }
    if (!st)
      return Status(st.code(), "node '" + n.name + "' (" + opKey(n) + ", tactic " +
                                   std::to_string(n.tactic) + " " + n.tactic_name +
                                   "): " + st.message());
    // The node's sizes: every copy queued, then one wait (readback holds 8 bytes a size).
    if (!n.size_tensors.empty() && readback.capacity() < 8 * n.size_tensors.size())
      OPFORGE_RETURN_IF_ERROR(readback.reserve(dev, 8 * n.size_tensors.size(), true));
    for (size_t j = 0; j < n.size_tensors.size(); ++j) {
      const Tensor& out = outs[n.size_tensors[j].output];
      OPFORGE_RETURN_IF_ERROR(dev->memcpyAsync(readback.data() + 8 * j, out.data,
                                               dtypeSize(out.desc.dtype),
                                               rt::CopyKind::kDeviceToHost, stream));
    }
    if (!n.size_tensors.empty()) OPFORGE_RETURN_IF_ERROR(dev->streamSynchronize(stream));
    for (size_t j = 0; j < n.size_tensors.size(); ++j) {
      const auto& s = n.size_tensors[j];
      const uint8_t* rb = readback.data() + 8 * j;
      const int64_t v = outs[s.output].desc.dtype == DataType::kInt64
                            ? *reinterpret_cast<const int64_t*>(rb)
                            : *reinterpret_cast<const int32_t*>(rb);
      // The bound the buffers were sized for: the plan's, or this run's (at_upper).
      std::optional<int64_t> upper = alloc_bindings.value(s.symbol);
      if (!upper && at_upper) upper = at_upper->value(s.symbol);
      if (!upper && !shapes::unbounded(s))
        return Status::internal("node '" + n.name + "': size tensor '" + s.symbol +
                                "' has no upper bound");
      if (v < 0 || (upper && v > *upper))
        return Status::runtime("node '" + n.name + "' reported data-dependent size " +
                               std::to_string(v) + " outside [0, " +
                               (upper ? std::to_string(*upper) : "no bound") +
                               "] (its declared upper bound)");
      bindings.bind(s.symbol, v);
    }
    if (!n.size_tensors.empty()) {
      // Real shapes of this node's outputs now that their sizes are known.
      for (int32_t t : n.outputs) {
        OPFORGE_ASSIGN_OR_RETURN(
            dims[t], bindings.outputDims(label(k), p.tensors[t].name, p.tensors[t].dims));
      }
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
  OPFORGE_RETURN_IF_ERROR(c.ensureStreamAndEvents());
  void* s = user_stream ? user_stream : c.own_stream;
  c.last_stream = s;
  OPFORGE_RETURN_IF_ERROR(c.dev->eventRecord(c.ev[0], s));
  if (c.poison)
    for (size_t i = 0; i < p.storages.size(); ++i)
      if (!c.storage_is_input[i])
        OPFORGE_RETURN_IF_ERROR(
            c.dev->memsetAsync(c.arena.data() + c.storage_offset[i], 0xff, c.storage_bytes[i], s));
  for (int32_t t : p.inputs)
    if (c.staged_inputs.count(t) && c.tensorData(t) != c.staging[t]->data()) {
      const size_t bytes = c.desc(t, c.alloc_dims[t]).bytes();
      OPFORGE_RETURN_IF_ERROR(c.dev->memcpyAsync(c.tensorData(t), c.staging[t]->data(), bytes,
                                                 rt::CopyKind::kHostToDevice, s));
    }
  OPFORGE_RETURN_IF_ERROR(c.dev->eventRecord(c.ev[1], s));
  // Layers: a CUDA graph replay when possible (static network, second run with these shapes on).
  c.run_times.cuda_graph = false;
  const bool graphable = c.use_graph && c.dev->canCapture() && !c.e->host_sync_needed &&
                         !c.profiling && !c.sync_each_layer;
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
    // Host-visible devices have no output staging: output() reads the layers' memory.
    if (p.tensors[t].kind == plan::TensorKind::kInput || c.bound.count(t) || c.dev->hostVisible())
      continue;
    const size_t bytes = c.desc(t, c.dims[t]).bytes();
    if (c.tensor_dynamic[t]) {  // sized by this run: its staging buffer too
      auto& b = c.staging[t];
      if (!b) b = std::make_unique<DeviceBuffer>();
      if (b->capacity() < bytes) OPFORGE_RETURN_IF_ERROR(c.dev->streamSynchronize(s));
      OPFORGE_RETURN_IF_ERROR(b->reserve(c.dev, std::max<size_t>(bytes, 1), true));
    }
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
  if (!c.last_stream) return Status::ok();
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
  if (!error_records.data()) return Status::ok();
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

}  // namespace opforge
