#include "build_state.h"

namespace opforge::build {

Result<std::vector<uint8_t>> BuildState::writePlan() {
  plan::Plan p;
  p.producer = std::string("opforge ") + OPFORGE_VERSION_STRING;
  p.source = g_.source;
  p.backend = static_cast<int32_t>(cfg_.backend);
  p.device = "cpu";
  if (dev_) {
    p.device = dev_->info().name;
    p.arch = dev_->info().arch();
    p.cuda_runtime = dev_->info().runtime_version;
  }
  std::map<int, int32_t> tid;  // value id -> plan tensor id
  std::vector<uint8_t> weights;
  auto tensorOf = [&](int v) -> int32_t {
    auto it = tid.find(v);
    if (it != tid.end()) return it->second;
    const Value& val = g_.values[v];
    plan::Tensor t;
    t.name = val.name;
    t.dtype = val.dtype;
    t.format = val.format;
    t.dims = val.dims;
    t.is_output = val.is_output;
    if (val.constant) {
      t.kind = plan::TensorKind::kConstant;
      size_t off =
          (weights.size() + plan::kWeightAlign - 1) / plan::kWeightAlign * plan::kWeightAlign;
      weights.resize(off);
      weights.insert(weights.end(), val.constant->data.begin(), val.constant->data.end());
      t.weight_offset = off;
      t.weight_bytes = val.constant->data.size();
    } else {
      t.kind = val.is_input ? plan::TensorKind::kInput : plan::TensorKind::kActivation;
    }
    p.tensors.push_back(std::move(t));
    int32_t id = static_cast<int32_t>(p.tensors.size()) - 1;
    tid[v] = id;
    return id;
  };
  for (int v : g_.inputs) p.inputs.push_back(tensorOf(v));
  for (int n : order_) {
    const Node& node = g_.nodes[n];
    plan::Node pn;
    pn.name = node.name;
    pn.ns = node.op->schema().ns;
    pn.op = node.op->schema().name;
    pn.version = node.op->schema().version;
    pn.library = node.op->builtin() ? "<built-in>" : baseName(node.op->library().path);
    if (node.op->schema().plan_attrs_only) {
      for (const auto& a : node.op->schema().plan_attrs)
        if (const AttrValue* v = node.attrs.find(a)) pn.attrs.set(a, *v);
    } else {
      pn.attrs = node.attrs;
    }
    for (int v : node.inputs) pn.inputs.push_back(v < 0 ? -1 : tensorOf(v));
    for (int v : node.outputs) pn.outputs.push_back(tensorOf(v));
    pn.size_tensors = node.size_tensors;
    pn.assertions = node.assertions;
    for (const auto& gd : node.guards) pn.guards.push_back({tensorOf(gd.cond), gd.when});
    pn.combo = node.combo;
    pn.tactic = node.tactic;
    const auto* t = [&]() -> const OpSchema::Tactic* {
      for (const auto& x : node.op->schema().tactics)
        if (x.id == node.tactic) return &x;
      return nullptr;
    }();
    pn.tactic_name = t ? t->name : "?";
    pn.backend = static_cast<int32_t>(t ? t->backend : Backend::kCpu);
    pn.build_time_ms = node.build_time_ms;
    p.nodes.push_back(std::move(pn));
  }
  for (int v : g_.outputs) p.outputs.push_back(tensorOf(v));

  // Storage: aliased outputs share their input's storage (union-find), lifetimes by step.
  const int nt = static_cast<int>(p.tensors.size());
  std::vector<int> parent(nt);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> find = [&](int x) {
    return parent[x] == x ? x : parent[x] = find(parent[x]);
  };
  for (size_t k = 0; k < order_.size(); ++k) {
    const Node& node = g_.nodes[order_[k]];
    for (size_t o = 0; o < node.aliases.size(); ++o)
      if (node.aliases[o] >= 0)
        parent[find(tid[node.outputs[o]])] = find(tid[node.inputs[node.aliases[o]]]);
  }
  std::map<int, int32_t> storage_of_root;
  for (int t = 0; t < nt; ++t) {
    if (p.tensors[t].kind == plan::TensorKind::kConstant) continue;
    int root = find(t);
    auto it = storage_of_root.find(root);
    if (it == storage_of_root.end()) {
      it = storage_of_root.emplace(root, static_cast<int32_t>(p.storages.size())).first;
      p.storages.push_back({INT32_MAX, -1});
    }
    p.tensors[t].storage = it->second;
  }
  for (int32_t t : p.inputs) {
    auto& s = p.storages[p.tensors[t].storage];
    s.first = -1;
    s.last = std::max(s.last, -1);
  }
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const auto& pn = p.nodes[k];
    for (int32_t t : pn.outputs) {
      auto& s = p.storages[p.tensors[t].storage];
      s.first = std::min<int32_t>(s.first, static_cast<int32_t>(k));
      s.last = std::max<int32_t>(s.last, static_cast<int32_t>(k));
    }
    std::vector<int32_t> reads = pn.inputs;  // a guard's condition is read too
    for (const auto& gd : pn.guards) reads.push_back(gd.first);
    for (int32_t t : reads) {
      if (t < 0 || p.tensors[t].kind == plan::TensorKind::kConstant) continue;
      auto& s = p.storages[p.tensors[t].storage];
      s.last = std::max<int32_t>(s.last, static_cast<int32_t>(k));
    }
  }
  for (int32_t t : p.outputs)
    if (p.tensors[t].kind != plan::TensorKind::kConstant)
      p.storages[p.tensors[t].storage].last = INT32_MAX;

  for (const auto& prof : profiles_) {
    std::vector<plan::ProfileDim> pd;
    for (int v : g_.inputs) {
      const auto& r = prof.inputs.at(g_.values[v].name);
      pd.push_back({g_.values[v].name, r.min, r.opt, r.max});
    }
    p.profiles.push_back(std::move(pd));
  }
  for (int v : g_.inputs) {
    const Value& val = g_.values[v];
    for (size_t a = 0; a < val.dims.size(); ++a)
      if (val.dims[a].kind() == DimExpr::Kind::kSymbol)
        p.input_symbols.push_back({val.dims[a].symbolName(), {tid[v], static_cast<int32_t>(a)}});
  }
  // Workspace at the max point of each profile (for `inspect`; the runtime re-queries).
  for (size_t prof = 0; prof < profiles_.size(); ++prof) {
    OPFORGE_ASSIGN_OR_RETURN(auto b, bindings(prof, 2));
    auto look = b.lookup();
    for (size_t k = 0; k < order_.size(); ++k) {
      const Node& node = g_.nodes[order_[k]];
      OPFORGE_ASSIGN_OR_RETURN(NodeDescs d, placedDescs(node, look));
      size_t ws = 0;
      if (!node.instance->tacticApplies(node.tactic, d.in, d.out, &ws))
        return Status::unsupported(g_.source + ": " + graph::nodeLabel(node) + ": tactic " +
                                   std::to_string(node.tactic) +
                                   " does not apply at the max shapes");
      p.nodes[k].workspace = std::max<uint64_t>(p.nodes[k].workspace, ws);
    }
  }
  return plan::serialize(p, weights);
}

}  // namespace opforge::build
