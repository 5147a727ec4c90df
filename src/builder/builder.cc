#include "build_state.h"

namespace opforge {

Builder::Builder(std::shared_ptr<Registry> registry)
    : registry_(registry ? std::move(registry) : Registry::global()) {}

Result<std::vector<uint8_t>> Builder::buildSerializedNetwork(const NetworkDefinition& network,
                                                             const BuilderConfig& config) {
  build::BuildState st(network.graph(), config, registry_);
  return st.run();
}

namespace build {

Status BuildState::checkProfiles() {
  profiles_ = cfg_.profiles;
  bool dynamic = false;
  for (int id : g_.inputs)
    for (const auto& d : g_.values[id].dims) dynamic |= !d.isConst();
  if (profiles_.empty()) {
    if (dynamic) {
      for (int id : g_.inputs) {
        const Value& v = g_.values[id];
        for (const auto& d : v.dims)
          if (!d.isConst())
            return Status::invalid(
                g_.source + ": input '" + v.name + "' has dynamic dimensions " + toString(v.dims) +
                "; give an optimization profile (--minShapes/--optShapes/--maxShapes, "
                "or --shapes for one static shape)");
      }
    }
    profiles_.emplace_back();
  }
  for (size_t p = 0; p < profiles_.size(); ++p) {
    auto& prof = profiles_[p];
    const std::string where = "optimization profile " + std::to_string(p);
    for (const auto& [name, r] : prof.inputs) {
      int id = g_.findValue(name);
      if (id < 0 || !g_.values[id].is_input) {
        std::string names;
        for (int i : g_.inputs) names += (names.empty() ? "" : ", ") + g_.values[i].name;
        return Status::invalid(where + " names '" + name +
                               "', which is not a network input (inputs: " + names + ")");
      }
    }
    for (int id : g_.inputs) {
      const Value& v = g_.values[id];
      auto it = prof.inputs.find(v.name);
      bool dyn =
          std::any_of(v.dims.begin(), v.dims.end(), [](const DimExpr& d) { return !d.isConst(); });
      if (it == prof.inputs.end()) {
        if (dyn)
          return Status::invalid(where + " gives no shapes for input '" + v.name + "' " +
                                 toString(v.dims) + ", which has dynamic dimensions");
        std::vector<int64_t> s;
        for (const auto& d : v.dims) s.push_back(d.constValue());
        prof.inputs[v.name] = ShapeRange{s, s, s};
        continue;
      }
      ShapeRange& r = it->second;
      if (r.opt.empty()) r.opt = r.max.empty() ? r.min : r.max;
      if (r.min.empty()) r.min = r.opt;
      if (r.max.empty()) r.max = r.opt;
      for (const auto* vec : {&r.min, &r.opt, &r.max})
        if (vec->size() != v.dims.size())
          return Status::invalid(where + ": input '" + v.name + "' has rank " +
                                 std::to_string(v.dims.size()) + " " + toString(v.dims) +
                                 " but the profile gives " + dimsToString(*vec) + " (rank " +
                                 std::to_string(vec->size()) + ")");
      for (size_t a = 0; a < v.dims.size(); ++a) {
        if (r.min[a] < 0)
          return Status::invalid(where + ": input '" + v.name + "' dimension " + std::to_string(a) +
                                 " is negative");
        if (!(r.min[a] <= r.opt[a] && r.opt[a] <= r.max[a]))
          return Status::invalid(where + ": input '" + v.name + "' dimension " + std::to_string(a) +
                                 " needs min <= opt <= max, got " + std::to_string(r.min[a]) +
                                 ", " + std::to_string(r.opt[a]) + ", " + std::to_string(r.max[a]));
        if (v.dims[a].isConst())
          for (const auto* vec : {&r.min, &r.opt, &r.max})
            if ((*vec)[a] != v.dims[a].constValue())
              return Status::invalid(where + ": input '" + v.name + "' dimension " +
                                     std::to_string(a) + " is fixed at " +
                                     std::to_string(v.dims[a].constValue()) +
                                     " but the profile gives " + std::to_string((*vec)[a]));
      }
    }
  }
  return Status::ok();
}

Result<shapes::Evaluator> BuildState::bindings(size_t profile, int point,
                                               bool sizes_at_upper) const {
  static const char* kPoint[] = {"min", "opt", "max"};
  const OptimizationProfile& p = profiles_[profile];
  shapes::Evaluator ev("at the " + std::string(kPoint[point]) + " shapes of optimization profile " +
                       std::to_string(profile));
  for (int id : g_.inputs) {
    const ShapeRange& r = p.inputs.at(g_.values[id].name);
    ev.bindShape(g_.values[id].dims, point == 0 ? r.min : point == 1 ? r.opt : r.max);
  }
  // Data-dependent sizes: their opt value at the opt point, their upper bound otherwise.
  const shapes::Bound bound =
      point == 1 && !sizes_at_upper ? shapes::Bound::kOpt : shapes::Bound::kUpper;
  for (int n : order_)
    OPFORGE_RETURN_IF_ERROR(ev.bindSizes(g_.source + ": " + graph::nodeLabel(g_.nodes[n]),
                                         g_.nodes[n].size_tensors, bound));
  return ev;
}

Status BuildState::checkShapesAtProfiles() {
  // Assertions over a data-dependent size (a NonZero count, a TopK of run-time K) hold or not
  // only for the data: the runtime checks them once the size is known. At the profiles' shapes
  // the size stands at its opt value or bound, where an equality would fail for no reason
  // (transformers' Mixtral, "eager" experts: a Split of the tokens routed to an expert).
  std::vector<std::string> sizes;
  for (int n : order_)
    for (const auto& s : g_.nodes[n].size_tensors) sizes.push_back(s.symbol);
  for (size_t p = 0; p < profiles_.size(); ++p) {
    for (int point = 0; point < 3; ++point) {
      OPFORGE_ASSIGN_OR_RETURN(auto ev, bindings(p, point));
      for (int id : g_.inputs) {
        auto dims = evalDims(g_.values[id].dims, ev.lookup());
        auto count = dims ? checked::numel(*dims) : std::nullopt;
        if (dims && (!count || *count > checked::kMaxElements))
          return Status::outOfRange(g_.source + ": input '" + g_.values[id].name + "' of shape " +
                                    dimsToString(*dims) + " " + ev.where() +
                                    " has more than 2^40 elements, opforge's maximum per tensor");
      }
      for (int n : order_) {
        const Node& node = g_.nodes[n];
        const std::string label = g_.source + ": " + graph::nodeLabel(node);
        // A node of an If branch may not hold where its branch is not taken: the runtime checks
        // it when the branch runs.
        if (node.guards.empty()) {
          std::vector<DimAssertion> now;
          for (const auto& a : node.assertions)
            if (!shapes::readsAnySize(a, sizes)) now.push_back(a);
          if (Status st = ev.checkAll(label, now, shapes::Unbound::kError); !st.isOk()) {
            // The rule's message holds symbolic dims (a dynamic export's can run to pages): the
            // node's inputs as numbers at this point say at once what went wrong.
            std::string ins;
            for (int v : node.inputs) {
              if (v < 0) continue;
              auto d = evalDims(g_.values[v].dims, ev.lookup());
              if (d)
                ins +=
                    (ins.empty() ? "" : ", ") + ("'" + g_.values[v].name + "' ") + dimsToString(*d);
            }
            return ins.empty() ? st
                               : Status(st.code(),
                                        st.message() + "; its inputs " + ev.where() + ": " + ins);
          }
        }
        for (int v : node.outputs) {
          OPFORGE_ASSIGN_OR_RETURN(auto dims,
                                   ev.outputDims(label, g_.values[v].name, g_.values[v].dims));
          auto count = checked::numel(dims);
          if (!count || *count > checked::kMaxElements)
            return Status::outOfRange(label + ": output '" + g_.values[v].name + "' has shape " +
                                      dimsToString(dims) + " " + ev.where() + ": " +
                                      (count ? std::to_string(*count) + " elements"
                                             : "more elements than fit in 64 bits") +
                                      "; opforge's maximum is 2^40 elements per tensor");
        }
      }
    }
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> BuildState::run() {
  for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) order_.push_back(i);
  if (g_.outputs.empty())
    return Status::invalid(g_.source + ": the network has no outputs (markOutput)");
  OPFORGE_RETURN_IF_ERROR(checkProfiles());
  const size_t before = order_.size();
  {
    graph::PassContext pc{g_, order_, *reg_, cfg_.constant_folding, cfg_.log, {}, {}, {}};
    pc.disabled = cfg_.disabled_passes;
    OPFORGE_RETURN_IF_ERROR(graph::runPasses(pc));
    pass_counters_ = std::move(pc.counters);
    if (!cfg_.disabled_passes.empty()) {
      std::string off;
      for (const auto& n : cfg_.disabled_passes) off += (off.empty() ? "" : ", ") + n;
      log("graph passes disabled: " + off);
    }
    if (cfg_.verbose) {
      std::string ran;
      for (const auto& p : pc.ran) ran += (ran.empty() ? "" : ", ") + p;
      log("graph passes run, in order: " + ran);
    }
  }
  OPFORGE_RETURN_IF_ERROR(checkShapesAtProfiles());
  OPFORGE_RETURN_IF_ERROR(chooseFormats());
  OPFORGE_RETURN_IF_ERROR(runPostFormatPasses());
  OPFORGE_RETURN_IF_ERROR(chooseTactics());
  OPFORGE_RETURN_IF_ERROR(placeViews());
  OPFORGE_ASSIGN_OR_RETURN(auto bytes, writePlan());
  std::string passes;
  for (const auto& [what, n] : pass_counters_) passes += std::to_string(n) + " " + what + ", ";
  log("built " + g_.source + ": " + std::to_string(before) + " nodes in, " +
      std::to_string(order_.size()) + " layers out (" + passes + std::to_string(reformats_) +
      " reformats and " + std::to_string(copies_) + " in-place copies inserted, " +
      std::to_string(folded_reformats_) + " weight conversions done at build time), " +
      std::to_string(profiles_.size()) + " profile(s), plan " + std::to_string(bytes.size()) +
      " bytes");
  return bytes;
}

}  // namespace build
}  // namespace opforge
