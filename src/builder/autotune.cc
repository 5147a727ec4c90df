#include "autotune.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "../common/checked.h"
#include "../common/wire.h"
#include "build_state.h"
#include "opforge/builder.h"
#include "opforge/io.h"

namespace opforge::tune {

namespace {
constexpr const char* kCacheHeader = "opforge-timing-cache 1";

// Device memory for one timing session, freed on scope exit.
struct DeviceMem {
  rt::DeviceApi& dev;
  std::vector<void*> ptrs;
  explicit DeviceMem(rt::DeviceApi& d) : dev(d) {}
  ~DeviceMem() {
    for (void* p : ptrs) dev.free(p);
  }
  Result<void*> alloc(size_t bytes) {
    void* p = nullptr;
    OPFORGE_RETURN_IF_ERROR(dev.malloc(&p, std::max<size_t>(bytes, 256)));
    ptrs.push_back(p);
    return p;
  }
};

}  // namespace

std::vector<uint8_t> fill(const TimedInput& in, std::mt19937_64& rng) {
  if (in.data && in.data->size() == in.desc.bytes()) return *in.data;
  std::vector<uint8_t> v(in.desc.bytes(), 0);
  if (!isFloatType(in.desc.dtype)) return v;  // integers: zeros keep indices in range
  // A block of random values in [-1, 1), repeated: timing needs realistic values, not a fresh
  // draw and a typed store for each element, which for a batch-128 activation of 10^8 elements
  // is estimated at about a second, for every combination and reformat timed (not measured).
  const int64_t block = std::min<int64_t>(in.desc.numel(), int64_t{1} << 16);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < block; ++i) storeFromDouble(v.data(), in.desc.dtype, i, u(rng));
  const size_t bb = static_cast<size_t>(block) * dtypeSize(in.desc.dtype);
  for (size_t off = bb; bb && off < v.size(); off += bb)
    std::memcpy(v.data() + off, v.data(), std::min(bb, v.size() - off));
  return v;
}

Status TimingCache::load(const std::string& path, const std::string& device) {
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0) return Status::ok();              // a new cache
  OPFORGE_RETURN_IF_ERROR(checked::regularFile(path, "timing cache"));  // not a FIFO: open blocks
  std::ifstream f(path);
  if (!f) return Status::ok();  // a new cache
  std::string header;
  std::getline(f, header);
  if (header != std::string(kCacheHeader) + " " + device)
    return Status::invalid("timing cache '" + path + "' was written for another GPU or format (" +
                           header + "); it is ignored and will be rewritten");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string key, what;
    double ms;
    if (!(ls >> key >> ms)) continue;
    std::getline(ls, what);
    entries_[key] = Entry{ms, what};
  }
  return Status::ok();
}

Status TimingCache::save(const std::string& path, const std::string& device) const {
  std::ostringstream os;
  os << kCacheHeader << " " << device << "\n";
  for (const auto& [k, e] : entries_) os << k << " " << e.ms << " " << e.what << "\n";
  std::string text = os.str();
  return writeFileAtomic(path, std::vector<uint8_t>(text.begin(), text.end()));
}

namespace {
// Cache keys are long (op, attributes, shapes, GPU): the file stores a 64-bit hash of each.
std::string hashKey(const std::string& key) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(wire::checksum(key.data(), key.size())));
  return buf;
}
}  // namespace

std::optional<double> TimingCache::find(const std::string& key) const {
  auto it = entries_.find(hashKey(key));
  if (it == entries_.end()) return std::nullopt;
  return it->second.ms;
}

void TimingCache::put(const std::string& key, double ms, const std::string& what) {
  entries_[hashKey(key)] = Entry{ms, what};
}

std::vector<TacticTime> timeTactics(rt::DeviceApi& dev, const KernelInstance& inst,
                                    const std::vector<int32_t>& tactics,
                                    const std::vector<TimedInput>& inputs,
                                    const std::vector<TensorDesc>& outputs, TimingCache* cache,
                                    const std::string& key_prefix, int reps) {
  std::vector<TacticTime> out;
  std::vector<int32_t> todo;
  for (int32_t t : tactics) {
    TacticTime r;
    r.tactic = t;
    if (cache) {
      auto hit = cache->find(key_prefix + "#" + std::to_string(t));
      if (hit) {
        r.median_ms = *hit;
        r.cached = true;
        ++cache->hits;
        out.push_back(r);
        continue;
      }
      ++cache->misses;
    }
    todo.push_back(t);
    out.push_back(r);
  }
  if (todo.empty()) return out;

  auto failAll = [&](const Status& st) {
    for (auto& r : out)
      if (!r.cached) r.error = st.message();
    return out;
  };
  DeviceMem mem(dev);
  std::mt19937_64 rng(0x5eed);
  std::vector<Tensor> ins, outs;
  std::vector<TensorDesc> in_d;
  for (const auto& in : inputs) {
    if (!in.present) {
      ins.push_back(Tensor{});
      in_d.push_back(TensorDesc{});
      continue;
    }
    auto p = mem.alloc(in.desc.bytes());
    if (!p) return failAll(p.status());
    auto host = fill(in, rng);
    Status st = dev.memcpyAsync(*p, host.data(), host.size(), rt::CopyKind::kHostToDevice, nullptr);
    if (!st) return failAll(st);
    ins.push_back(Tensor{in.desc, *p, Device::kCuda});
    in_d.push_back(in.desc);
  }
  for (const auto& d : outputs) {
    auto p = mem.alloc(d.bytes());
    if (!p) return failAll(p.status());
    // Poison: timing must not depend on what a previous run left behind.
    Status st = dev.memsetAsync(*p, 0xff, d.bytes(), nullptr);
    if (!st) return failAll(st);
    outs.push_back(Tensor{d, *p, Device::kCuda});
  }
  size_t ws_max = 0;
  for (int32_t t : todo) {
    size_t ws = 0;
    inst.tacticApplies(t, in_d, outputs, &ws);
    ws_max = std::max(ws_max, ws);
  }
  void* ws = nullptr;
  if (ws_max) {
    auto p = mem.alloc(ws_max);
    if (!p) return failAll(p.status());
    ws = *p;
  }
  void* stream = nullptr;
  if (Status st = dev.streamCreate(&stream); !st) return failAll(st);
  std::vector<void*> events(std::max(reps, 1) + 1, nullptr);
  for (auto& e : events) (void)dev.eventCreate(&e);
  double best = -1;  // the best median so far (cached ones included)
  for (const auto& r : out)
    if (r.cached && r.median_ms >= 0 && (best < 0 || r.median_ms < best)) best = r.median_ms;
  for (auto& r : out) {
    if (r.cached) continue;
    // Warm-up: the first run may load modules or build plans; the second is timed as a probe.
    Status st = inst.run(r.tactic, ins, outs, ws, ws_max, stream);
    if (st) st = dev.eventRecord(events[0], stream);
    if (st) st = inst.run(r.tactic, ins, outs, ws, ws_max, stream);
    if (st) st = dev.eventRecord(events[1], stream);
    if (st) st = dev.streamSynchronize(stream);
    if (st && best >= 0) {
      auto probe = dev.eventElapsedMs(events[0], events[1]);
      if (probe && *probe > kPruneFloorMs && *probe > kPruneFactor * best) {
        r.median_ms = *probe;
        r.pruned = true;
        continue;  // not cached: a later build with a better-known best times it again
      }
    }
    if (st) st = inst.run(r.tactic, ins, outs, ws, ws_max, stream);
    for (int i = 0; i < reps && st; ++i) {
      st = dev.eventRecord(events[i], stream);
      if (st) st = inst.run(r.tactic, ins, outs, ws, ws_max, stream);
    }
    if (st) st = dev.eventRecord(events[reps], stream);
    if (st) st = dev.streamSynchronize(stream);
    if (!st) {
      (void)dev.lastError();
      (void)dev.streamSynchronize(stream);
      r.error = st.message();
      continue;
    }
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
      auto d = dev.eventElapsedMs(events[i], events[i + 1]);
      if (d) ms.push_back(*d);
    }
    std::sort(ms.begin(), ms.end());
    r.median_ms = ms.empty() ? -1 : ms[ms.size() / 2];
    if (r.median_ms >= 0 && (best < 0 || r.median_ms < best)) best = r.median_ms;
    if (cache && r.median_ms >= 0) {
      std::string what =
          key_prefix.substr(0, key_prefix.find('|')) + " tactic " + std::to_string(r.tactic);
      cache->put(key_prefix + "#" + std::to_string(r.tactic), r.median_ms, what);
    }
  }
  for (auto& e : events) dev.eventDestroy(e);
  dev.streamDestroy(stream);
  return out;
}

}  // namespace opforge::tune

// ---------------------------------------------------------------------------------------------
// The builder's tactic timing: what it times and where (BuildState, build_state.h)
// ---------------------------------------------------------------------------------------------

namespace opforge::build {

Status pinNotApplicable(const std::string& source, const graph::Node& node, int32_t id) {
  const OpSchema::Tactic* t = nullptr;
  for (const auto& d : node.op->schema().tactics)
    if (d.id == id) t = &d;
  return Status::invalid(source + ": " + graph::nodeLabel(node) +
                         ": the tactic pinned by "
                         "layer_tactics, " +
                         std::to_string(id) + (t ? " " + t->name : "") +
                         ", does not apply to this layer at its types, formats and profile "
                         "shapes (combination " +
                         node.combo + ")");
}

Status BuildState::prepareTuning() {
  if (tuning_ready_) return Status::ok();
  if (cfg_.backend == Backend::kCuda) {
    auto devr = rt::cudaDevice();
    if (!devr) return devr.status().withContext("cannot build a CUDA plan");
    dev_ = *devr;
    gpu_ = dev_->info().describe();
    if (!cfg_.timing_cache_file.empty()) {
      Status st = cache_.load(cfg_.timing_cache_file, gpu_);
      if (!st) log("warning: " + st.message());
    }
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
  run_sized_.clear();
  for (int n : order_)
    for (const auto& s : g_.nodes[n].size_tensors)
      if (shapes::unbounded(s)) run_sized_.insert(s.symbol);
  tuning_ready_ = true;
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
    if (t.backend != cfg_.backend || (t.tf32 && !cfg_.tf32)) continue;
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
  OPFORGE_ASSIGN_OR_RETURN(const auto pin, pinnedTactic(node));
  if (pin) {  // layer_tactics: that tactic alone, if it applies here (0: none, the CPU reference)
    const bool applies = std::find(candidates.begin(), candidates.end(), *pin) != candidates.end();
    candidates.clear();
    if (applies) candidates.push_back(*pin);
  }
  NodeTiming r;
  if (candidates.empty()) return r;  // no CUDA tactic: the layer runs on the CPU
  if (!dev_ && candidates.size() == 1) {
    r.tactic = candidates[0];  // CPU builds time only a choice
    return r;
  }
  // Dims that only the run knows (sizes with no bound stand at a guessed opt value here, where
  // a Concat's inputs need not even agree): the first tactic that applies, untimed; the runtime
  // asks it again at the run's dims.
  const auto namesRunSize = [&](int v) {
    if (v < 0 || run_sized_.empty()) return false;
    std::set<std::string> syms;
    for (const auto& d : g_.values[v].dims) d.collectSymbols(syms);
    for (const auto& s : syms)
      if (run_sized_.count(s)) return true;
    return false;
  };
  if (std::any_of(node.inputs.begin(), node.inputs.end(), namesRunSize) ||
      std::any_of(node.outputs.begin(), node.outputs.end(), namesRunSize)) {
    r.tactic = candidates[0];
    if (cfg_.verbose)
      log("  " + node.name + ": tactic " + std::to_string(r.tactic) +
          " untimed (its shapes are known only at run time)");
    return r;
  }
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
  auto times = dev_ ? tune::timeTactics(*dev_, *node.instance, candidates, ins, out_d, &cache_,
                                        key + "|" + gpu_)
                    : tune::timeHostTactics(*node.instance, candidates, ins, out_d);
  r.tried = static_cast<int>(times.size());
  for (const auto& t : times) {
    if (t.median_ms < 0) {
      log("warning: " + graph::nodeLabel(node) + ": tactic " + std::to_string(t.tactic) +
          " failed while timing: " + t.error);
      continue;
    }
    if (cfg_.verbose)
      log("  " + node.name + ": tactic " + std::to_string(t.tactic) + " " +
          std::to_string(t.median_ms) + " ms" + (t.cached ? " (cache)" : "") +
          (t.pruned
               ? " (one run: slower than " + std::to_string(static_cast<int>(tune::kPruneFactor)) +
                     "x the best before it)"
               : ""));
    if (r.tactic < 0 || t.median_ms < r.ms) {
      r.tactic = t.tactic;
      r.ms = t.median_ms;
    }
  }
  if (r.tactic < 0)
    return Status::runtime(g_.source + ": " + graph::nodeLabel(node) + ": every " +
                           (dev_ ? "CUDA" : "CPU") +
                           " tactic failed while timing (see the warnings above)");
  return r;
}

Result<std::optional<int32_t>> BuildState::pinnedTactic(const Node& node) {
  pins_used_.resize(cfg_.layer_tactics.size(), false);
  for (size_t i = 0; i < cfg_.layer_tactics.size(); ++i) {
    const std::string& e = cfg_.layer_tactics[i];
    const size_t eq = e.find('=');  // tactic names may hold '=' ("python.impl(tactic=2)")
    if (eq == std::string::npos || eq == 0 || eq + 1 == e.size())
      return Status::invalid("layer_tactics: '" + e + "' is not PATTERN=TACTIC");
    if (!layerMatches(node, e.substr(0, eq))) continue;
    pins_used_[i] = true;
    const std::string want = e.substr(eq + 1);
    if (want == "reference" || want == "0") return std::optional<int32_t>(0);
    std::string known = "0 reference";
    for (const auto& t : node.op->schema().tactics) {
      if (t.id == 0) {  // "cpu.reference"
        if (t.name == want) return std::optional<int32_t>(0);
        continue;
      }
      known += ", " + std::to_string(t.id) + " " + t.name;
      if (t.name != want && std::to_string(t.id) != want) continue;
      if (t.backend != cfg_.backend)
        return Status::invalid(g_.source + ": " + graph::nodeLabel(node) + ": layer_tactics '" + e +
                               "': tactic " + std::to_string(t.id) + " " + t.name + " is a " +
                               (t.backend == Backend::kCuda ? "CUDA" : "CPU") +
                               " tactic and this build is for the " +
                               (cfg_.backend == Backend::kCuda ? "GPU" : "CPU"));
      return std::optional<int32_t>(t.id);
    }
    return Status::invalid(g_.source + ": " + graph::nodeLabel(node) + ": layer_tactics '" + e +
                           "': the op has no tactic '" + want + "' (its tactics: " + known + ")");
  }
  return std::optional<int32_t>{};
}

Status BuildState::checkPinsUsed() const {
  for (size_t i = 0; i < cfg_.layer_tactics.size(); ++i)
    if (i >= pins_used_.size() || !pins_used_[i])
      return Status::invalid(g_.source + ": layer_tactics '" + cfg_.layer_tactics[i] +
                             "' matches no layer (or an earlier entry takes every layer it "
                             "matches; fused layers are named after the nodes they replace, "
                             "joined with '+', and `opforge exec --verbose` lists them)");
  return Status::ok();
}

// True when every binding stores `dims` alike in formats a and b: formatsShareBytes with each
// symbolic dimension as -1 (never the 1 that would let the bytes agree).
static bool alwaysShareBytes(const std::vector<DimExpr>& dims, Format a, Format b) {
  std::vector<int64_t> known;
  for (const DimExpr& d : dims) known.push_back(d.isConst() ? d.constValue() : -1);
  return formatsShareBytes(a, b, known);
}

Result<double> BuildState::timeReformat(int value, Format to_f, DataType to_t) {
  const Value& v = g_.values[value];
  // Same type, same bytes: the Reformat's view tactic runs it in place (placeViews), for free.
  if ((to_t == v.dtype || to_t == DataType::kUndefined) && alwaysShareBytes(v.dims, v.format, to_f))
    return 0.0;
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

Result<double> BuildState::inputCost(int value, Format to_f, DataType to_t) {
  const size_t rank = g_.values[value].dims.size();
  auto holds = [&](int id) {
    const Value& x = g_.values[id];
    return x.dtype == to_t && effectiveFormat(x.format, rank) == effectiveFormat(to_f, rank);
  };
  auto it = reduced_of_.find(value);
  if (it == reduced_of_.end()) return holds(value) ? 0.0 : timeReformat(value, to_f, to_t);
  if (holds(it->second)) return 0.0;
  // The cast back itself when the layer reads the graph's type in the cast's format.
  if (holds(value)) return timeReformat(it->second, g_.values[value].format, to_t);
  return timeReformat(it->second, to_f, to_t);
}

Result<BuildState::NodeTiming> BuildState::timeNodeAsPlaced(const Node& node) {
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
  return timeNode(node, in_t, in_f, out_t, out_f, node.allowed_tactics);
}

Status BuildState::chooseTactics() {
  if (cfg_.backend == Backend::kCpu) return chooseCpuTactics();
  OPFORGE_RETURN_IF_ERROR(prepareTuning());
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0, tried = 0, fallbacks = 0;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    if (cfg_.progress) cfg_.progress(done, static_cast<int>(order_.size()), node.name, tried);
    OPFORGE_ASSIGN_OR_RETURN(const auto pin, pinnedTactic(node));
    if (!pin) {  // a view that applies costs nothing where placeViews runs it in place
      OPFORGE_ASSIGN_OR_RETURN(const int32_t view, viewTactic(node));
      if (view >= 0) {
        node.tactic = view;
        node.build_time_ms = 0;
        ++done;
        continue;
      }
    }
    OPFORGE_ASSIGN_OR_RETURN(NodeTiming t, timeNodeAsPlaced(node));
    tried += t.tried;
    ++done;
    if (pin && *pin != 0 && t.tactic != *pin) return pinNotApplicable(g_.source, node, *pin);
    if (pin && *pin == 0) {
      node.tactic = 0;
      ++fallbacks;
      log(graph::nodeLabel(node) + " runs its CPU reference (layer_tactics)");
      continue;
    }
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
  OPFORGE_RETURN_IF_ERROR(checkPinsUsed());
  if (!cfg_.timing_cache_file.empty())
    OPFORGE_RETURN_IF_ERROR(cache_.save(cfg_.timing_cache_file, gpu_));
  return Status::ok();
}

}  // namespace opforge::build
