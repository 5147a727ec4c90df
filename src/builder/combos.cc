// combos.cc — chooseFormats' choice of one node's type/format combination: the valid ones and
// their scores, on CUDA the fastest of them, the error when none fits.
#include <string_view>

#include "build_state.h"

namespace opforge::build {

namespace {
// '*' matches any run of characters (fused node names join the originals with '+').
bool globMatch(std::string_view pat, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pat.size() && pat[p] == text[t]) {
      ++p, ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

bool keptInFp32(const graph::Node& node, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns)
    if (layerMatches(node, p)) return true;
  return false;
}
}  // namespace

bool layerMatches(const graph::Node& node, const std::string& pattern) {
  const std::string& key = node.op->schema().key();  // "ns::name"
  const std::string name_only =
      key.substr(key.rfind("::") == std::string::npos ? 0 : key.rfind("::") + 2);
  return pattern == key || pattern == name_only || globMatch(pattern, node.name);
}

std::set<int> BuildState::linearReaders() const {
  // Values some reader of which can only take LINEAR (an op without channels-last combinations,
  // or a network output): a layer writing them channels-last is charged the reformat back.
  std::set<int> linear_readers;
  for (const auto& node : g_.nodes)
    if (!node.dead && !takesChannelsLast(node.op->schema()))
      for (int v : node.inputs)
        if (v >= 0) linear_readers.insert(v);
  for (int v : g_.outputs) linear_readers.insert(v);
  return linear_readers;
}

BuildState::NodeChoice BuildState::nodeChoice(int n, const std::vector<DataType>& reduced) const {
  const Node& node = g_.nodes[n];
  NodeChoice c;
  c.n = n;
  c.schema = &node.op->schema();
  c.inputs = node.inputs;
  c.outputs = node.outputs;
  c.aliases = node.aliases;
  c.nd = c.schema->outputs.size();
  c.label = graph::nodeLabel(node);
  const bool pinned = !reduced.empty() && keptInFp32(node, cfg_.fp32_layers);
  if (!pinned) c.lowerable = reduced;
  const size_t ni = c.inputs.size(), no = c.outputs.size();
  c.in_f.assign(ni, Format::kLinear);
  c.out_f.assign(no, Format::kLinear);
  c.in_t.assign(ni, DataType::kUndefined);
  c.out_t.assign(no, DataType::kUndefined);
  for (size_t i = 0; i < ni; ++i)
    if (c.inputs[i] >= 0) c.in_t[i] = g_.values[c.inputs[i]].dtype;
  for (size_t o = 0; o < no; ++o) c.out_t[o] = g_.values[c.outputs[o]].dtype;
  return c;
}

std::string BuildState::typeList(const NodeChoice& c) const {
  // The graph's types of the present inputs and the declared outputs: "FP32, INT64, FP32".
  std::string got;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i] >= 0)
      got += (got.empty() ? "" : ", ") + dtypeName(g_.values[c.inputs[i]].dtype);
  for (size_t o = 0; o < c.nd; ++o)
    got += (got.empty() ? "" : ", ") + dtypeName(g_.values[c.outputs[o]].dtype);
  return got;
}

Result<BuildState::ScoredCombos> BuildState::scoreCombos(
    const NodeChoice& c, const std::vector<DataType>& reduced) const {
  // A combination matches when every position has the graph's type, or — with --fp16/--bf16 —
  // every FP32 position takes one reduced type (the layer runs in that precision; fitCombo,
  // opforge/combo.h). Each input it would reformat costs 1, each output it writes channels-last
  // 0.25; running in reduced precision earns 0.5.
  const OpSchema& s = *c.schema;
  const size_t ni = c.inputs.size();
  const int positions = static_cast<int>(s.inputs.size() + c.nd);
  std::vector<ComboSlot> in_slots(ni), out_slots(c.nd);
  for (size_t i = 0; i < ni; ++i)
    if (c.inputs[i] >= 0) {
      const Value& v = g_.values[c.inputs[i]];
      in_slots[i] = {v.dtype, v.format, v.dims.size()};
    }
  for (size_t o = 0; o < c.nd; ++o)
    out_slots[o] = {g_.values[c.outputs[o]].dtype, Format::kLinear,
                    g_.values[c.outputs[o]].dims.size()};
  ScoredCombos sc;
  for (const auto& combo : s.combos) {
    auto ex = expandCombo(combo, positions);
    if (!ex) return ex.status().withContext(c.label);
    for (const auto& cc : *ex) {
      sc.accepted += (sc.accepted.empty() ? "" : " | ") + describe(cc);
      const ComboFit fit = fitCombo(s, cc, in_slots, out_slots, c.aliases, c.lowerable);
      bool ok = fit.fits();
      double score = fit.input_reformats + 0.25 * fit.output_reformats;
      const DataType lowered = fit.lowered;
      // A combination restricted to tactics of another backend (e.g. channels-last, CUDA only).
      if (ok && !cc.tactic_ids.empty())
        ok = std::any_of(cc.tactic_ids.begin(), cc.tactic_ids.end(), [&](int32_t id) {
          return std::any_of(s.tactics.begin(), s.tactics.end(), [&](const auto& t) {
            return t.id == id && t.backend == cfg_.backend;
          });
        });
      if (lowered != DataType::kUndefined && lowered != DataType::kFloat32)
        score -=
            0.5 + 0.01 * static_cast<double>(std::find(reduced.begin(), reduced.end(), lowered) -
                                             reduced.begin());
      if (ok && std::none_of(sc.valid.begin(), sc.valid.end(),
                             [&](const auto& v) { return v.second == cc; })) {
        sc.valid.emplace_back(score, cc);
        sc.lowered.push_back(lowered);
      }
    }
  }
  return sc;
}

BuildState::Placement BuildState::placement(const NodeChoice& c, const ConcreteCombo& cc) const {
  const OpSchema& s = *c.schema;
  const size_t ni = c.inputs.size(), no = c.outputs.size();
  Placement p;
  p.ti.assign(ni, DataType::kUndefined);
  p.fi.assign(ni, Format::kLinear);
  p.to.resize(no);
  p.fo.assign(no, Format::kLinear);
  for (size_t i = 0; i < ni; ++i) {
    if (c.inputs[i] < 0) continue;
    const Value& v = g_.values[c.inputs[i]];
    const Format want = cc.formats[c.declPos(i)];
    p.ti[i] = cc.types[c.declPos(i)];
    p.fi[i] = effectiveFormat(want, v.dims.size()) == effectiveFormat(v.format, v.dims.size())
                  ? v.format
                  : want;
  }
  for (size_t o = 0; o < no; ++o) {
    p.to[o] = o < c.nd ? cc.types[s.inputs.size() + o] : g_.values[c.outputs[o]].dtype;
    p.fo[o] = o < c.nd ? cc.formats[s.inputs.size() + o] : Format::kLinear;
  }
  return p;
}

Result<std::optional<ConcreteCombo>> BuildState::fastestCombo(const NodeChoice& c,
                                                              const ScoredCombos& sc,
                                                              const std::set<int>& linear_readers) {
  // Times each combination (its best tactic plus the reformats it needs on its inputs and, for
  // LINEAR-only readers, its outputs); the fastest, or none when no combination has a CUDA tactic.
  OPFORGE_RETURN_IF_ERROR(prepareTuning());
  std::optional<ConcreteCombo> chosen;
  double best_ms = 1e30;
  for (const auto& [score, cc] : sc.valid) {
    const Placement p = placement(c, cc);
    double extra = 0;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (c.inputs[i] >= 0 && !g_.values[c.inputs[i]].constant) {  // weights: converted at build
        OPFORGE_ASSIGN_OR_RETURN(double r, inputCost(c.inputs[i], p.fi[i], p.ti[i]));
        extra += r;
      }
    for (size_t o = 0; o < c.nd; ++o)
      if (linear_readers.count(c.outputs[o]) &&
          effectiveFormat(p.fo[o], g_.values[c.outputs[o]].dims.size()) != Format::kLinear) {
        OPFORGE_ASSIGN_OR_RETURN(double r, timeReformat(c.outputs[o], p.fo[o], p.to[o]));
        extra += r;
      }
    OPFORGE_ASSIGN_OR_RETURN(NodeTiming t,
                             timeNode(g_.nodes[c.n], p.ti, p.fi, p.to, p.fo, cc.tactic_ids));
    if (t.tactic < 0) continue;
    if (cfg_.verbose)
      log("  " + g_.nodes[c.n].name + " [" + describe(cc) + "]: " + std::to_string(t.ms + extra) +
          " ms");
    if (t.ms + extra < best_ms) {
      best_ms = t.ms + extra;
      chosen = cc;
    }
  }
  return chosen;
}

Status BuildState::noComboError(const NodeChoice& c, const std::string& accepted) const {
  return Status::unsupported(g_.source + ": " + c.label +
                             ": no type combination of the op accepts (" + typeList(c) +
                             "); it accepts: " + accepted);
}

Status BuildState::chooseCombo(NodeChoice& c, const std::vector<DataType>& reduced,
                               const std::set<int>& linear_readers) {
  // The lowest score wins (the first of equals); on CUDA, when several fit, the fastest.
  OPFORGE_ASSIGN_OR_RETURN(ScoredCombos sc, scoreCombos(c, reduced));
  // The precision plan's label (precision.cc): only the combinations in that precision, if any.
  if (auto it = reduced_layer_.find(c.n); it != reduced_layer_.end()) {
    ScoredCombos kept;
    kept.accepted = sc.accepted;
    for (size_t k = 0; k < sc.valid.size(); ++k)
      if (inPrecision(sc.lowered[k], it->second, reduced)) {
        kept.valid.push_back(sc.valid[k]);
        kept.lowered.push_back(sc.lowered[k]);
      }
    if (!kept.valid.empty()) sc = std::move(kept);
  }
  std::optional<ConcreteCombo> chosen;
  double best = 1e30;
  for (const auto& [score, cc] : sc.valid)
    if (score < best) {
      best = score;
      chosen = cc;
    }
  if (cfg_.backend == Backend::kCuda && sc.valid.size() > 1) {
    OPFORGE_ASSIGN_OR_RETURN(std::optional<ConcreteCombo> fastest,
                             fastestCombo(c, sc, linear_readers));
    if (fastest) chosen = std::move(fastest);
  }
  if (!chosen) return noComboError(c, sc.accepted);
  const size_t in_decl = c.schema->inputs.size();
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    c.in_f[i] = chosen->formats[c.declPos(i)];
    if (c.inputs[i] >= 0) c.in_t[i] = chosen->types[c.declPos(i)];
  }
  for (size_t o = 0; o < c.nd; ++o) {
    c.out_f[o] = chosen->formats[in_decl + o];
    c.out_t[o] = chosen->types[in_decl + o];
  }
  c.combo_text = describe(*chosen);
  g_.nodes[c.n].allowed_tactics = chosen->tactic_ids;
  return Status::ok();
}

}  // namespace opforge::build
