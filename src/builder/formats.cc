#include <string_view>

#include "build_state.h"

namespace opforge::build {

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
  order_ = std::move(new_order);
  return Status::ok();
}

const std::vector<BuildState::PostFormatPass>& BuildState::postFormatTable() {
  // In the order they run (ascending numbers, each its own).
  static const std::vector<PostFormatPass> table = {
      {"output_formats", 10, &BuildState::reformatOutputs},
      {"cast_pairs", 20, &BuildState::removeCastPairs},
      {"constant_reformats", 30, &BuildState::foldConstantReformats},
      {"alias_copies", 40, &BuildState::insertAliasCopies},
  };
  return table;
}

std::vector<graph::PassInfo> postFormatPasses() {
  std::vector<graph::PassInfo> out;
  for (const auto& p : BuildState::postFormatTable()) out.push_back({p.name, p.order});
  return out;
}

Status BuildState::runPostFormatPasses() {
  std::string ran;
  for (const auto& p : postFormatTable()) {
    ran += (ran.empty() ? "" : ", ") + std::string(p.name) + " (" + std::to_string(p.order) + ")";
    Status st = (this->*p.run)();
    if (!st) return st;
  }
  if (cfg_.verbose) log("post-format passes run, in order: " + ran);
  return Status::ok();
}

Status BuildState::reformatOutputs() {
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
    order_.push_back(rn);
    ++reformats_;
    int nv = g_.nodes[rn].outputs[0];
    g_.values[nv].name = name;
    g_.values[nv].is_output = true;
    g_.outputs[k] = nv;
  }
  return Status::ok();
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

Status BuildState::removeCastPairs() {
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
  return Status::ok();
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

}  // namespace opforge::build
