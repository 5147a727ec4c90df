#include "opforge/builder.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <numeric>
#include <set>
#include <string_view>

#include "../common/checked.h"
#include "../device/device.h"
#include "../graph/fold.h"
#include "../graph/graph.h"
#include "../graph/passes.h"
#include "../plan/plan.h"
#include "../shapes/evaluator.h"
#include "autotune.h"
#include "opforge/combo.h"
#include "opforge/version.h"

namespace opforge {

Builder::Builder(std::shared_ptr<Registry> registry)
    : registry_(registry ? std::move(registry) : Registry::global()) {}

namespace {

using graph::Graph;
using graph::Node;
using graph::Value;

std::string baseName(const std::string& path) {
  size_t s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

class BuildState {
 public:
  BuildState(Graph g, const BuilderConfig& cfg, std::shared_ptr<Registry> reg)
      : g_(std::move(g)), cfg_(cfg), reg_(std::move(reg)) {}

  Result<std::vector<uint8_t>> run();

 private:
  void log(const std::string& m) const {
    if (cfg_.log) cfg_.log(m);
  }
  Status checkProfiles();
  Status checkShapesAtProfiles();
  Status chooseFormats();
  Status insertAliasCopies();
  Status chooseTactics();
  Result<std::vector<uint8_t>> writePlan();

  Result<int> insertReformat(int value, Format to, DataType to_dtype, const std::string& why);
  void removeCastPairs();
  Status foldConstantReformats();
  // Symbol values at a profile point (0 min, 1 opt, 2 max). Data-dependent sizes take their opt
  // value at the opt point unless `sizes_at_upper` (what buffers must hold), else their upper
  // bound.
  Result<shapes::Evaluator> bindings(size_t profile, int point, bool sizes_at_upper = false) const;

  Graph g_;
  const BuilderConfig& cfg_;
  std::shared_ptr<Registry> reg_;
  std::vector<OptimizationProfile> profiles_;
  // CUDA builds: the device, the timing cache, the point tactics are timed at, the profile corners.
  rt::DeviceApi* dev_ = nullptr;
  std::string gpu_;
  tune::TimingCache cache_;
  shapes::Evaluator tune_point_;
  std::vector<shapes::Evaluator> corners_;
  struct NodeTiming {
    int32_t tactic = -1;  // -1: no CUDA tactic applies
    double ms = 0;
    int tried = 0;
  };
  Status prepareTuning();
  Result<NodeTiming> timeNode(const Node& node, const std::vector<DataType>& in_t,
                              const std::vector<Format>& in_f, const std::vector<DataType>& out_t,
                              const std::vector<Format>& out_f,
                              const std::vector<int32_t>& allowed);
  Result<double> timeReformat(int value, Format to_f, DataType to_t);
  std::vector<int> order_;  // node indices in execution order
  int reformats_ = 0, copies_ = 0, folded_reformats_ = 0;
  std::map<std::string, int> pass_counters_;
};

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
        OPFORGE_RETURN_IF_ERROR(ev.checkAll(label, node.assertions, shapes::Unbound::kError));
        for (int v : node.outputs) {
          OPFORGE_ASSIGN_OR_RETURN(
              auto dims,
              ev.dims(label + ": output '" + g_.values[v].name + "'", g_.values[v].dims));
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

Result<int> BuildState::insertReformat(int value, Format to, DataType to_dtype,
                                       const std::string& why) {
  const RegisteredOp* op = reg_->find("opforge", "Reformat", "1");
  if (!op) return Status::internal("the built-in opforge::Reformat op is missing");
  const Value src = g_.values[value];
  const DataType dt = to_dtype == DataType::kUndefined ? src.dtype : to_dtype;
  AttrMap a;
  a.set("to_format", int64_t{static_cast<int64_t>(to)});
  a.set("to_dtype", int64_t{dt == src.dtype ? 0 : static_cast<int64_t>(dt)});
  std::string name = g_.uniqueNodeName("reformat:" + src.name);
  std::string suffix = dt != src.dtype ? ":" + dtypeName(dt) : "";
  if (to != src.format || suffix.empty()) suffix += ":" + formatName(to);
  std::string out = g_.uniqueValueName(src.name + suffix + why);
  OPFORGE_ASSIGN_OR_RETURN(int n, graph::addNode(g_, op, name, a, {value}, {out}, false));
  Node& node = g_.nodes[n];
  node.builder_made = true;
  node.in_formats = {src.format};
  node.out_formats = {to};
  node.combo = dtypeName(src.dtype) + ":" + formatName(src.format) + " -> " + dtypeName(dt) + ":" +
               formatName(to);
  g_.values[node.outputs[0]].format = to;
  return n;
}

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
  const std::string& key = node.op->schema().key();  // "ns::name"
  const std::string name_only =
      key.substr(key.rfind("::") == std::string::npos ? 0 : key.rfind("::") + 2);
  for (const auto& p : patterns)
    if (p == key || p == name_only || globMatch(p, node.name)) return true;
  return false;
}
}  // namespace

Status BuildState::chooseFormats() {
  std::vector<int> new_order;
  std::map<std::tuple<int, Format, DataType>, int>
      cache;                 // (value, format, dtype) -> converted value
  std::map<int, int> remap;  // value -> the value consumers read now (after precision lowering)
  std::vector<DataType> reduced;
  if (cfg_.fp16) reduced.push_back(DataType::kFloat16);
  if (cfg_.bf16) reduced.push_back(DataType::kBFloat16);
  const std::vector<DataType> none;
  // Values some reader of which can only take LINEAR (an op without channels-last combinations,
  // or a network output): a layer writing them channels-last is charged the reformat back.
  std::set<int> linear_readers;
  {
    for (const auto& node : g_.nodes)
      if (!node.dead && !takesChannelsLast(node.op->schema()))
        for (int v : node.inputs)
          if (v >= 0) linear_readers.insert(v);
    for (int v : g_.outputs) linear_readers.insert(v);
  }
  for (int n : order_) {
    for (int& v : g_.nodes[n].inputs)
      if (v >= 0 && remap.count(v)) v = remap[v];
    // Copy what we need: insertReformat may grow g_.nodes.
    const RegisteredOp* op = g_.nodes[n].op;
    const OpSchema& s = op->schema();
    const size_t ni = g_.nodes[n].inputs.size();
    const size_t nd = s.outputs.size();
    std::vector<int> inputs = g_.nodes[n].inputs;
    std::vector<int> outputs = g_.nodes[n].outputs;
    std::vector<int> aliases = g_.nodes[n].aliases;
    const std::string label = graph::nodeLabel(g_.nodes[n]);
    const bool pinned = !reduced.empty() && keptInFp32(g_.nodes[n], cfg_.fp32_layers);
    const std::vector<DataType>& lowerable = pinned ? none : reduced;

    auto declPos = [&](size_t i) { return std::min(i, s.inputs.size() - 1); };
    std::vector<Format> in_f(ni, Format::kLinear), out_f(outputs.size(), Format::kLinear);
    std::vector<DataType> in_t(ni, DataType::kUndefined),
        out_t(outputs.size(), DataType::kUndefined);
    for (size_t i = 0; i < ni; ++i)
      if (inputs[i] >= 0) in_t[i] = g_.values[inputs[i]].dtype;
    for (size_t o = 0; o < outputs.size(); ++o) out_t[o] = g_.values[outputs[o]].dtype;
    std::string combo_text;
    if (!s.combos.empty()) {
      const int positions = static_cast<int>(s.inputs.size() + nd);
      double best = 1e30;
      std::optional<ConcreteCombo> chosen;
      std::string accepted;
      // A combination matches when every position has the graph's type, or — with --fp16/--bf16 —
      // every FP32 position takes one reduced type (the layer runs in that precision; fitCombo,
      // opforge/combo.h). Each input it would reformat costs 1, each output it writes
      // channels-last 0.25; running in reduced precision earns 0.5.
      std::vector<ComboSlot> in_slots(ni), out_slots(nd);
      for (size_t i = 0; i < ni; ++i)
        if (inputs[i] >= 0) {
          const Value& v = g_.values[inputs[i]];
          in_slots[i] = {v.dtype, v.format, v.dims.size()};
        }
      for (size_t o = 0; o < nd; ++o)
        out_slots[o] = {g_.values[outputs[o]].dtype, Format::kLinear,
                        g_.values[outputs[o]].dims.size()};
      std::vector<std::pair<double, ConcreteCombo>> valid;
      for (const auto& c : s.combos) {
        auto ex = expandCombo(c, positions);
        if (!ex) return ex.status().withContext(label);
        for (const auto& cc : *ex) {
          accepted += (accepted.empty() ? "" : " | ") + describe(cc);
          const ComboFit fit = fitCombo(s, cc, in_slots, out_slots, aliases, lowerable);
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
            score -= 0.5 +
                     0.01 * static_cast<double>(std::find(reduced.begin(), reduced.end(), lowered) -
                                                reduced.begin());
          if (ok && std::none_of(valid.begin(), valid.end(),
                                 [&](const auto& v) { return v.second == cc; }))
            valid.emplace_back(score, cc);
        }
      }
      for (const auto& [score, cc] : valid)
        if (score < best) {
          best = score;
          chosen = cc;
        }
      if (cfg_.backend == Backend::kCuda && valid.size() > 1) {
        // Several combinations fit: time each (its best tactic plus the reformats it needs on
        // its inputs) and keep the fastest. Combinations without a CUDA tactic lose.
        OPFORGE_RETURN_IF_ERROR(prepareTuning());
        double best_ms = 1e30;
        for (const auto& [score, cc] : valid) {
          std::vector<DataType> ti(ni, DataType::kUndefined), to(outputs.size());
          std::vector<Format> fi(ni, Format::kLinear), fo(outputs.size(), Format::kLinear);
          double extra = 0;
          for (size_t i = 0; i < ni; ++i) {
            if (inputs[i] < 0) continue;
            const Value& v = g_.values[inputs[i]];
            ti[i] = cc.types[declPos(i)];
            fi[i] = effectiveFormat(cc.formats[declPos(i)], v.dims.size()) ==
                            effectiveFormat(v.format, v.dims.size())
                        ? v.format
                        : cc.formats[declPos(i)];
            if ((ti[i] != v.dtype || fi[i] != v.format) &&
                !v.constant) {  // weights are converted at build time
              OPFORGE_ASSIGN_OR_RETURN(double r, timeReformat(inputs[i], fi[i], ti[i]));
              extra += r;
            }
          }
          for (size_t o = 0; o < outputs.size(); ++o) {
            to[o] = o < nd ? cc.types[s.inputs.size() + o] : g_.values[outputs[o]].dtype;
            fo[o] = o < nd ? cc.formats[s.inputs.size() + o] : Format::kLinear;
            if (o < nd && linear_readers.count(outputs[o]) &&
                effectiveFormat(fo[o], g_.values[outputs[o]].dims.size()) != Format::kLinear) {
              OPFORGE_ASSIGN_OR_RETURN(double r, timeReformat(outputs[o], fo[o], to[o]));
              extra += r;
            }
          }
          OPFORGE_ASSIGN_OR_RETURN(NodeTiming t,
                                   timeNode(g_.nodes[n], ti, fi, to, fo, cc.tactic_ids));
          if (t.tactic < 0) continue;
          if (cfg_.verbose)
            log("  " + g_.nodes[n].name + " [" + describe(cc) +
                "]: " + std::to_string(t.ms + extra) + " ms");
          if (t.ms + extra < best_ms) {
            best_ms = t.ms + extra;
            chosen = cc;
          }
        }
      }
      if (!chosen) {
        std::string got;
        for (size_t i = 0; i < ni; ++i)
          if (inputs[i] >= 0)
            got += (got.empty() ? "" : ", ") + dtypeName(g_.values[inputs[i]].dtype);
        for (size_t o = 0; o < nd; ++o)
          got += (got.empty() ? "" : ", ") + dtypeName(g_.values[outputs[o]].dtype);
        return Status::unsupported(g_.source + ": " + label +
                                   ": no type combination of the op accepts (" + got +
                                   "); it accepts: " + accepted);
      }
      for (size_t i = 0; i < ni; ++i) {
        in_f[i] = chosen->formats[declPos(i)];
        if (inputs[i] >= 0) in_t[i] = chosen->types[declPos(i)];
      }
      for (size_t o = 0; o < nd; ++o) {
        out_f[o] = chosen->formats[s.inputs.size() + o];
        out_t[o] = chosen->types[s.inputs.size() + o];
      }
      combo_text = describe(*chosen);
      g_.nodes[n].allowed_tactics = chosen->tactic_ids;
    } else {
      for (size_t i = 0; i < ni; ++i)
        if (inputs[i] >= 0)
          combo_text += (combo_text.empty() ? "" : ", ") + dtypeName(g_.values[inputs[i]].dtype);
      for (size_t o = 0; o < nd; ++o)
        combo_text += (combo_text.empty() ? "" : ", ") + dtypeName(g_.values[outputs[o]].dtype);
    }
    for (size_t i = 0; i < ni; ++i) {
      if (inputs[i] < 0) continue;
      const Value& v = g_.values[inputs[i]];
      const bool fmt_ok =
          effectiveFormat(v.format, v.dims.size()) == effectiveFormat(in_f[i], v.dims.size());
      if (fmt_ok && v.dtype == in_t[i]) {
        in_f[i] = v.format;
        continue;
      }
      if (fmt_ok) in_f[i] = v.format;
      auto key = std::make_tuple(inputs[i], in_f[i], in_t[i]);
      auto it = cache.find(key);
      int nv;
      if (it != cache.end()) {
        nv = it->second;
      } else {
        OPFORGE_ASSIGN_OR_RETURN(int rn, insertReformat(inputs[i], in_f[i], in_t[i], ""));
        new_order.push_back(rn);
        ++reformats_;
        nv = g_.nodes[rn].outputs[0];
        cache[key] = nv;
      }
      g_.nodes[n].inputs[i] = nv;
    }
    {
      Node& node = g_.nodes[n];
      node.in_formats = in_f;
      node.out_formats = out_f;
      node.combo = combo_text;
    }
    new_order.push_back(n);
    for (size_t o = 0; o < outputs.size(); ++o) {
      Value& v = g_.values[outputs[o]];
      v.format = out_f[o];
      if (o >= nd || v.dtype == out_t[o]) continue;
      // The layer writes reduced precision; a cast back gives consumers the graph's type.
      const std::string name = v.name;
      const DataType graph_t = v.dtype;
      v.dtype = out_t[o];
      v.name = g_.uniqueValueName(name + ":" + dtypeName(out_t[o]));
      const bool was_output = v.is_output;
      v.is_output = false;
      OPFORGE_ASSIGN_OR_RETURN(int rn, insertReformat(outputs[o], out_f[o], graph_t, ""));
      new_order.push_back(rn);
      ++reformats_;
      const int back = g_.nodes[rn].outputs[0];
      g_.values[back].name = name;
      g_.values[back].is_output = was_output;
      remap[outputs[o]] = back;
    }
  }
  for (int& v : g_.outputs)
    if (remap.count(v)) v = remap[v];
  // Network outputs in the format the caller wants (LINEAR unless set).
  for (size_t k = 0; k < g_.outputs.size(); ++k) {
    int id = g_.outputs[k];
    Value& v = g_.values[id];
    Format want = Format::kLinear;
    if (auto it = g_.output_formats.find(v.name); it != g_.output_formats.end()) want = it->second;
    if (effectiveFormat(v.format, v.dims.size()) == effectiveFormat(want, v.dims.size())) continue;
    std::string name = v.name;
    v.name = g_.uniqueValueName(name + ":" + formatName(v.format));
    v.is_output = false;
    OPFORGE_ASSIGN_OR_RETURN(int rn, insertReformat(id, want, DataType::kUndefined, ""));
    new_order.push_back(rn);
    ++reformats_;
    int nv = g_.nodes[rn].outputs[0];
    g_.values[nv].name = name;
    g_.values[nv].is_output = true;
    g_.outputs[k] = nv;
  }
  order_ = std::move(new_order);
  removeCastPairs();
  return foldConstantReformats();
}

Status BuildState::foldConstantReformats() {
  // Casts and layout changes of weights happen once, here, instead of at every inference: the
  // plan stores the weight in the type and format its layer reads.
  std::vector<int> live;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    if (node.builder_made && node.op->key() == "opforge::Reformat" && node.inputs[0] >= 0 &&
        g_.values[node.inputs[0]].constant && !g_.values[node.outputs[0]].is_output) {
      OPFORGE_ASSIGN_OR_RETURN(bool folded, graph::foldNode(g_, n, 0));
      if (folded) {
        --reformats_;
        ++folded_reformats_;
        continue;
      }
    }
    live.push_back(n);
  }
  order_ = std::move(live);
  return Status::ok();
}

void BuildState::removeCastPairs() {
  // A cast back to FP32 followed by a cast to the same reduced type and format: consumers of the
  // second read the first's input instead (chains of reduced-precision layers stay reduced).
  auto isCast = [&](const Node& nd) {
    return nd.builder_made && nd.op->key() == "opforge::Reformat" &&
           nd.attrs.get<int64_t>("to_dtype") != 0;
  };
  std::map<int, int> remap;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    for (int& v : node.inputs)
      if (v >= 0 && remap.count(v)) v = remap[v];
    if (!isCast(node)) continue;
    const int u = node.inputs[0];
    const int p = g_.values[u].producer;
    if (p < 0 || !isCast(g_.nodes[p])) continue;
    const int w = g_.nodes[p].inputs[0];
    const int out = node.outputs[0];
    if (g_.values[w].dtype != g_.values[out].dtype || g_.values[w].format != g_.values[out].format)
      continue;
    if (g_.values[out].is_output) continue;
    remap[out] = w;
    node.dead = true;
    --reformats_;
  }
  // Casts whose result nobody reads any more.
  std::vector<int> uses(g_.values.size(), 0);
  for (int n : order_)
    if (!g_.nodes[n].dead)
      for (int v : g_.nodes[n].inputs)
        if (v >= 0) ++uses[v];
  for (int n : order_) {
    Node& node = g_.nodes[n];
    if (!node.dead && isCast(node) && uses[node.outputs[0]] == 0 &&
        !g_.values[node.outputs[0]].is_output) {
      node.dead = true;
      --reformats_;
    }
  }
  std::vector<int> live;
  for (int n : order_)
    if (!g_.nodes[n].dead) live.push_back(n);
  order_ = std::move(live);
}

Status BuildState::insertAliasCopies() {
  std::vector<int> new_order;
  for (size_t step = 0; step < order_.size(); ++step) {
    int n = order_[step];
    std::vector<int> aliases = g_.nodes[n].aliases;
    for (size_t o = 0; o < aliases.size(); ++o) {
      int i = aliases[o];
      if (i < 0) continue;
      int v = g_.nodes[n].inputs[i];
      const Value& val = g_.values[v];
      // Network inputs stay untouched so that execute() can be repeated on the same inputs.
      bool needs_copy = val.constant != nullptr || val.is_output || val.is_input;
      for (size_t j = 0; j < g_.nodes[n].inputs.size(); ++j)
        needs_copy |= static_cast<int>(j) != i && g_.nodes[n].inputs[j] == v;
      for (size_t later = step + 1; later < order_.size() && !needs_copy; ++later)
        for (int u : g_.nodes[order_[later]].inputs) needs_copy |= u == v;
      for (int out : g_.outputs) needs_copy |= out == v;
      if (!needs_copy) continue;
      Format f = val.format;
      OPFORGE_ASSIGN_OR_RETURN(int cn, insertReformat(v, f, DataType::kUndefined, ":copy"));
      g_.nodes[cn].combo = "copy for in-place " + g_.nodes[n].name;
      new_order.push_back(cn);
      ++copies_;
      g_.nodes[n].inputs[i] = g_.nodes[cn].outputs[0];
    }
    new_order.push_back(n);
  }
  order_ = std::move(new_order);
  return Status::ok();
}

Status BuildState::prepareTuning() {
  if (cfg_.backend == Backend::kCpu || dev_) return Status::ok();
  auto devr = rt::cudaDevice();
  if (!devr) return devr.status().withContext("cannot build a CUDA plan");
  dev_ = *devr;
  gpu_ = dev_->info().describe();
  if (!cfg_.timing_cache_file.empty()) {
    Status st = cache_.load(cfg_.timing_cache_file, gpu_);
    if (!st) log("warning: " + st.message());
  }
  // Tune at the first profile's opt point (buffers of data-dependent size hold their upper bound).
  OPFORGE_ASSIGN_OR_RETURN(tune_point_, bindings(0, 1, true));
  // A tactic must apply over every profile's whole range, not only where it is timed.
  corners_.clear();
  for (size_t prof = 0; prof < profiles_.size(); ++prof)
    for (int point : {0, 2}) {
      OPFORGE_ASSIGN_OR_RETURN(auto c, bindings(prof, point));
      corners_.push_back(std::move(c));
    }
  return Status::ok();
}

Result<BuildState::NodeTiming> BuildState::timeNode(const Node& node,
                                                    const std::vector<DataType>& in_t,
                                                    const std::vector<Format>& in_f,
                                                    const std::vector<DataType>& out_t,
                                                    const std::vector<Format>& out_f,
                                                    const std::vector<int32_t>& allowed) {
  // Descriptions of the layer's tensors at a binding, with hypothetical types and formats.
  auto descs = [&](const shapes::Evaluator& b, std::vector<TensorDesc>& ins,
                   std::vector<TensorDesc>& outs) -> Status {
    auto look = b.lookup();
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] < 0) {
        ins.push_back(TensorDesc{});
        continue;
      }
      OPFORGE_ASSIGN_OR_RETURN(auto d, evalDims(g_.values[node.inputs[i]].dims, look));
      ins.push_back(TensorDesc{in_t[i], d, in_f[i]});
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      OPFORGE_ASSIGN_OR_RETURN(auto d, evalDims(g_.values[node.outputs[o]].dims, look));
      outs.push_back(TensorDesc{out_t[o], d, out_f[o]});
    }
    return Status::ok();
  };
  std::vector<TensorDesc> in_d, out_d;
  OPFORGE_RETURN_IF_ERROR(descs(tune_point_, in_d, out_d));
  std::vector<int32_t> candidates;
  for (const auto& t : node.op->schema().tactics) {
    if (t.backend != Backend::kCuda) continue;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), t.id) == allowed.end())
      continue;
    if (!node.instance->tacticApplies(t.id, in_d, out_d, nullptr)) continue;
    bool everywhere = true;
    for (const auto& c : corners_) {
      std::vector<TensorDesc> ci, co;
      OPFORGE_RETURN_IF_ERROR(descs(c, ci, co));
      everywhere = everywhere && node.instance->tacticApplies(t.id, ci, co, nullptr);
    }
    if (everywhere) candidates.push_back(t.id);
  }
  NodeTiming r;
  if (candidates.empty()) return r;  // no CUDA tactic: the layer runs on the CPU
  std::vector<tune::TimedInput> ins;
  std::string key = node.op->key() + "|" + node.op->schema().version + "|";
  for (const auto& [k, v] : node.attrs.all()) key += k + "=" + attrToString(v, 1u << 20) + ";";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    tune::TimedInput ti;
    ti.present = node.inputs[i] >= 0;
    ti.desc = in_d[i];
    if (ti.present && g_.values[node.inputs[i]].constant)
      ti.data = &g_.values[node.inputs[i]].constant->data;
    ins.push_back(ti);
    key += "|" + (ti.present ? describe(ti.desc) : std::string("-"));
  }
  for (const auto& d : out_d) key += "|" + describe(d);
  auto times =
      tune::timeTactics(*dev_, *node.instance, candidates, ins, out_d, &cache_, key + "|" + gpu_);
  r.tried = static_cast<int>(times.size());
  for (const auto& t : times) {
    if (t.median_ms < 0) {
      log("warning: " + graph::nodeLabel(node) + ": tactic " + std::to_string(t.tactic) +
          " failed while timing: " + t.error);
      continue;
    }
    if (cfg_.verbose)
      log("  " + node.name + ": tactic " + std::to_string(t.tactic) + " " +
          std::to_string(t.median_ms) + " ms" + (t.cached ? " (cache)" : ""));
    if (r.tactic < 0 || t.median_ms < r.ms) {
      r.tactic = t.tactic;
      r.ms = t.median_ms;
    }
  }
  if (r.tactic < 0)
    return Status::runtime(g_.source + ": " + graph::nodeLabel(node) +
                           ": every CUDA tactic failed while timing (see the warnings above)");
  return r;
}

Result<double> BuildState::timeReformat(int value, Format to_f, DataType to_t) {
  const Value& v = g_.values[value];
  const RegisteredOp* op = reg_->find("opforge", "Reformat", "1");
  AttrMap a;
  a.set("to_format", int64_t{static_cast<int64_t>(to_f)});
  a.set("to_dtype", int64_t{to_t == v.dtype ? 0 : static_cast<int64_t>(to_t)});
  OPFORGE_ASSIGN_OR_RETURN(auto inst, op->instantiate("reformat", a));
  auto look = tune_point_.lookup();
  OPFORGE_ASSIGN_OR_RETURN(auto d, evalDims(v.dims, look));
  tune::TimedInput in;
  in.desc = TensorDesc{v.dtype, d, v.format};
  TensorDesc out{to_t, d, to_f};
  std::string key = "opforge::Reformat|" + describe(in.desc) + "|" + describe(out) + "|" + gpu_;
  auto t = tune::timeTactics(*dev_, *inst, {1}, {in}, {out}, &cache_, key);
  return t.empty() || t[0].median_ms < 0 ? 0.0 : t[0].median_ms;
}

Status BuildState::chooseTactics() {
  if (cfg_.backend == Backend::kCpu) {
    for (int n : order_) g_.nodes[n].tactic = 0;
    return Status::ok();
  }
  OPFORGE_RETURN_IF_ERROR(prepareTuning());
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0, tried = 0, fallbacks = 0;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    if (cfg_.progress) cfg_.progress(done, static_cast<int>(order_.size()), node.name, tried);
    std::vector<DataType> in_t, out_t;
    std::vector<Format> in_f, out_f;
    for (int v : node.inputs) {
      in_t.push_back(v < 0 ? DataType::kUndefined : g_.values[v].dtype);
      in_f.push_back(v < 0 ? Format::kLinear : g_.values[v].format);
    }
    for (int v : node.outputs) {
      out_t.push_back(g_.values[v].dtype);
      out_f.push_back(g_.values[v].format);
    }
    OPFORGE_ASSIGN_OR_RETURN(NodeTiming t,
                             timeNode(node, in_t, in_f, out_t, out_f, node.allowed_tactics));
    tried += t.tried;
    ++done;
    if (t.tactic < 0) {
      node.tactic = 0;
      ++fallbacks;
      log("warning: " + graph::nodeLabel(node) + " has no CUDA tactic for " + node.combo +
          "; it runs on the CPU (its inputs and outputs are copied between the GPU and the host)");
      continue;
    }
    node.tactic = t.tactic;
    node.build_time_ms = t.ms;
    if (cfg_.progress) cfg_.progress(done, static_cast<int>(order_.size()), node.name, tried);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double total_ms = 0;
  for (int n : order_) total_ms += std::max(0.0, g_.nodes[n].build_time_ms);
  char summary[512];
  std::snprintf(summary, sizeof(summary),
                "timed %d tactics for %zu layers in %.2f s on %s (timing cache: %d hits, %d "
                "misses); %d layers on the "
                "CPU; sum of the chosen layers' times: %.4f ms",
                tried, order_.size(), secs, gpu_.c_str(), cache_.hits, cache_.misses, fallbacks,
                total_ms);
  log(summary);
  if (!cfg_.timing_cache_file.empty())
    OPFORGE_RETURN_IF_ERROR(cache_.save(cfg_.timing_cache_file, gpu_));
  return Status::ok();
}

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
    pn.attrs = node.attrs;
    for (int v : node.inputs) pn.inputs.push_back(v < 0 ? -1 : tensorOf(v));
    for (int v : node.outputs) pn.outputs.push_back(tensorOf(v));
    pn.size_tensors = node.size_tensors;
    pn.assertions = node.assertions;
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
    for (int32_t t : pn.inputs) {
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
      std::vector<TensorDesc> in, out;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (node.inputs[i] < 0) {
          in.push_back(TensorDesc{});
          continue;
        }
        const Value& v = g_.values[node.inputs[i]];
        OPFORGE_ASSIGN_OR_RETURN(auto d, evalDims(v.dims, look));
        in.push_back(TensorDesc{v.dtype, d, v.format});
      }
      for (int o : node.outputs) {
        const Value& v = g_.values[o];
        OPFORGE_ASSIGN_OR_RETURN(auto d, evalDims(v.dims, look));
        out.push_back(TensorDesc{v.dtype, d, v.format});
      }
      size_t ws = 0;
      if (!node.instance->tacticApplies(node.tactic, in, out, &ws))
        return Status::unsupported(g_.source + ": " + graph::nodeLabel(node) + ": tactic " +
                                   std::to_string(node.tactic) +
                                   " does not apply at the max shapes");
      p.nodes[k].workspace = std::max<uint64_t>(p.nodes[k].workspace, ws);
    }
  }
  return plan::serialize(p, weights);
}

Result<std::vector<uint8_t>> BuildState::run() {
  for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) order_.push_back(i);
  if (g_.outputs.empty())
    return Status::invalid(g_.source + ": the network has no outputs (markOutput)");
  OPFORGE_RETURN_IF_ERROR(checkProfiles());
  const size_t before = order_.size();
  {
    graph::PassContext pc{g_, order_, *reg_, cfg_.constant_folding, cfg_.log, {}, {}};
    OPFORGE_RETURN_IF_ERROR(graph::runPasses(pc));
    pass_counters_ = std::move(pc.counters);
    if (cfg_.verbose) {
      std::string ran;
      for (const auto& p : pc.ran) ran += (ran.empty() ? "" : ", ") + p;
      log("graph passes run, in order: " + ran);
    }
  }
  OPFORGE_RETURN_IF_ERROR(checkShapesAtProfiles());
  OPFORGE_RETURN_IF_ERROR(chooseFormats());
  OPFORGE_RETURN_IF_ERROR(insertAliasCopies());
  OPFORGE_RETURN_IF_ERROR(chooseTactics());
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

}  // namespace

Result<std::vector<uint8_t>> Builder::buildSerializedNetwork(const NetworkDefinition& network,
                                                             const BuilderConfig& config) {
  BuildState st(network.graph(), config, registry_);
  return st.run();
}

}  // namespace opforge
