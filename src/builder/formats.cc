// formats.cc — chooseFormats (per node: combination, input reformats, casts back) and the
// post-format passes; insertReformat makes every builder-made reformat, cast and copy.
#include "build_state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

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
  // It runs when its input exists: a value of an If branch is converted only in that branch.
  if (src.producer >= 0) node.guards = g_.nodes[src.producer].guards;
  node.in_formats = {src.format};
  node.out_formats = {to};
  node.combo = dtypeName(src.dtype) + ":" + formatName(src.format) + " -> " + dtypeName(dt) + ":" +
               formatName(to);
  g_.values[node.outputs[0]].format = to;
  return n;
}

Status BuildState::chooseFormats() {
  // Per node, in order: its combination (combos.cc), reformats of its inputs to it, casts of
  // its reduced-precision outputs back to the graph's type (later readers read the casts).
  std::vector<int> new_order;
  ReformatCache cache;       // (value, format, dtype) -> converted value
  std::map<int, int> remap;  // value -> the value consumers read now (after precision lowering)
  std::vector<DataType> reduced;
  if (cfg_.fp16) reduced.push_back(DataType::kFloat16);
  if (cfg_.bf16) reduced.push_back(DataType::kBFloat16);
  const std::set<int> linear_readers = linearReaders();
  reduced_of_.clear();
  OPFORGE_RETURN_IF_ERROR(planPrecision(reduced));
  for (int n : order_) {
    for (int& v : g_.nodes[n].inputs)
      if (v >= 0 && remap.count(v)) v = remap[v];
    NodeChoice c = nodeChoice(n, reduced);
    if (!c.schema->combos.empty())
      OPFORGE_RETURN_IF_ERROR(chooseCombo(c, reduced, linear_readers));
    else
      c.combo_text = typeList(c);
    OPFORGE_RETURN_IF_ERROR(reformatInputs(c, cache, new_order));
    Node& node = g_.nodes[n];
    node.in_formats = c.in_f;
    node.out_formats = c.out_f;
    node.combo = c.combo_text;
    new_order.push_back(n);
    OPFORGE_RETURN_IF_ERROR(castOutputsBack(c, remap, new_order));
  }
  for (int& v : g_.outputs)
    if (remap.count(v)) v = remap[v];
  order_ = std::move(new_order);
  return Status::ok();
}

Status BuildState::reformatInputs(NodeChoice& c, ReformatCache& cache,
                                  std::vector<int>& new_order) {
  // Inputs not in the chosen type and (effective) format read a reformat, one per (value,
  // format, dtype).
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] < 0) continue;
    const Value& v = g_.values[c.inputs[i]];
    const bool fmt_ok =
        effectiveFormat(v.format, v.dims.size()) == effectiveFormat(c.in_f[i], v.dims.size());
    if (fmt_ok && v.dtype == c.in_t[i]) {
      c.in_f[i] = v.format;
      continue;
    }
    if (fmt_ok) c.in_f[i] = v.format;
    // A cast back to the graph's type: read, or convert, the reduced-precision original.
    int src = c.inputs[i];
    if (auto r = reduced_of_.find(src); r != reduced_of_.end()) {
      src = r->second;
      const Value& u = g_.values[src];
      if (u.dtype == c.in_t[i] &&
          effectiveFormat(u.format, u.dims.size()) == effectiveFormat(c.in_f[i], u.dims.size())) {
        c.in_f[i] = u.format;
        g_.nodes[c.n].inputs[i] = src;
        continue;
      }
    }
    auto key = std::make_tuple(src, c.in_f[i], c.in_t[i]);
    auto it = cache.find(key);
    int nv;
    if (it != cache.end()) {
      nv = it->second;
    } else {
      OPFORGE_ASSIGN_OR_RETURN(int rn, insertReformat(src, c.in_f[i], c.in_t[i], ""));
      new_order.push_back(rn);
      ++reformats_;
      nv = g_.nodes[rn].outputs[0];
      cache[key] = nv;
    }
    g_.nodes[c.n].inputs[i] = nv;
  }
  return Status::ok();
}

Status BuildState::castOutputsBack(const NodeChoice& c, std::map<int, int>& remap,
                                   std::vector<int>& new_order) {
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    Value& v = g_.values[c.outputs[o]];
    v.format = c.out_f[o];
    if (o >= c.nd || v.dtype == c.out_t[o]) continue;
    // The layer writes reduced precision; a cast back gives consumers the graph's type.
    const std::string name = v.name;
    const DataType graph_t = v.dtype;
    v.dtype = c.out_t[o];
    g_.renameValue(c.outputs[o], g_.uniqueValueName(name + ":" + dtypeName(c.out_t[o])));
    const bool was_output = v.is_output;
    v.is_output = false;
    OPFORGE_ASSIGN_OR_RETURN(int rn, insertReformat(c.outputs[o], c.out_f[o], graph_t, ""));
    new_order.push_back(rn);
    ++reformats_;
    const int back = g_.nodes[rn].outputs[0];
    g_.renameValue(back, name);
    g_.values[back].is_output = was_output;
    remap[c.outputs[o]] = back;
    reduced_of_[back] = c.outputs[o];
  }
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
    g_.renameValue(id, g_.uniqueValueName(name + ":" + formatName(v.format)));
    v.is_output = false;
    OPFORGE_ASSIGN_OR_RETURN(int rn, insertReformat(id, want, DataType::kUndefined, ""));
    order_.push_back(rn);
    ++reformats_;
    int nv = g_.nodes[rn].outputs[0];
    g_.renameValue(nv, name);
    g_.values[nv].is_output = true;
    g_.outputs[k] = nv;
  }
  return Status::ok();
}

namespace {

// TensorRT's rule for weights converted to FP16: a nonzero value that would round to 0 becomes
// FP16's smallest subnormal (2^-24) of its sign — so an epsilon such as F.normalize's 1e-12 in a
// Clip keeps 0 / 0 away — and a finite value beyond FP16's range becomes +-65504, not infinity.
// Returns the adjusted copy of an FP32/FP64 constant, or nullptr when no value needs it; `note`
// says what changed.
std::shared_ptr<const TensorValue> fp16Representable(const TensorValue& t, std::string* note) {
  const DataType dt = t.desc.dtype;
  if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return nullptr;
  const size_t n = t.data.size() / dtypeSize(dt);
  auto at = [&](size_t i) -> double {
    if (dt == DataType::kFloat32) {
      float f;
      std::memcpy(&f, t.data.data() + i * 4, 4);
      return f;
    }
    double d;
    std::memcpy(&d, t.data.data() + i * 8, 8);
    return d;
  };
  constexpr double kTiny = 0x1p-24, kMax = 65504.0;
  std::shared_ptr<TensorValue> out;
  size_t tiny = 0, huge = 0;
  double smallest = 0, largest = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = at(i), a = std::fabs(v);
    double w;
    if (v != 0 && a <= 0x1p-25) {  // rounds to zero (2^-25 ties to even: zero)
      w = std::copysign(kTiny, v);
      smallest = tiny++ == 0 ? a : std::min(smallest, a);
    } else if (std::isfinite(v) && a > kMax) {
      w = std::copysign(kMax, v);
      largest = std::max(largest, a);
      ++huge;
    } else {
      continue;
    }
    if (!out) out = std::make_shared<TensorValue>(t);
    if (dt == DataType::kFloat32) {
      const float f = static_cast<float>(w);
      std::memcpy(out->data.data() + i * 4, &f, 4);
    } else {
      std::memcpy(out->data.data() + i * 8, &w, 8);
    }
  }
  if (!out) return nullptr;
  std::ostringstream m;
  if (tiny)
    m << tiny << " value(s) below FP16's smallest subnormal (the smallest " << smallest
      << ") became +-" << kTiny;
  if (tiny && huge) m << "; ";
  if (huge)
    m << huge << " value(s) beyond FP16's range (the largest " << largest << ") became +-65504";
  *note = m.str();
  return out;
}

}  // namespace

Status BuildState::foldConstantReformats() {
  // Casts and layout changes of weights happen once, here, instead of at every inference: the
  // plan stores the weight in the type and format its layer reads.
  std::vector<int> live;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    if (node.builder_made && node.op->key() == "opforge::Reformat" && node.inputs[0] >= 0 &&
        g_.values[node.inputs[0]].constant && !g_.values[node.outputs[0]].is_output) {
      const int sv = node.inputs[0], out = node.outputs[0];
      const std::shared_ptr<const TensorValue> orig = g_.values[sv].constant;
      std::string note;
      std::shared_ptr<const TensorValue> safe;
      if (g_.values[out].dtype == DataType::kFloat16) safe = fp16Representable(*orig, &note);
      if (safe) g_.values[sv].constant = safe;  // the cast reads the adjusted copy, others not
      Result<bool> folded = graph::foldNode(g_, n, 0);
      g_.values[sv].constant = orig;
      if (!folded.isOk()) return folded.status();
      if (*folded) {
        if (safe) {
          std::string readers;
          int count = 0;
          for (int r : order_)
            if (!g_.nodes[r].dead &&
                std::count(g_.nodes[r].inputs.begin(), g_.nodes[r].inputs.end(), out) > 0 &&
                count++ < 2)
              readers += (readers.empty() ? "'" : ", '") + g_.nodes[r].name + "'";
          if (count > 2) readers += " and " + std::to_string(count - 2) + " more";
          log("warning: " + g_.source + ": constant '" + g_.values[sv].name +
              "' converted to FP16 for " +
              (readers.empty() ? std::string("its readers")
                               : (count > 1 ? "layers " : "layer ") + readers) +
              ": " + note +
              " (as TensorRT converts weights; keep the layer in FP32 with --layerPrecisions to "
              "avoid it)");
        }
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
      for (size_t later = step + 1; later < order_.size() && !needs_copy; ++later) {
        for (int u : g_.nodes[order_[later]].inputs) needs_copy |= u == v;
        for (const auto& gd : g_.nodes[order_[later]].guards) needs_copy |= gd.cond == v;
      }
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
