#include "autotune.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "../common/checked.h"
#include "../common/wire.h"
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

std::vector<uint8_t> fill(const TimedInput& in, std::mt19937_64& rng) {
  if (in.data && in.data->size() == in.desc.bytes()) return *in.data;
  std::vector<uint8_t> v(in.desc.bytes(), 0);
  if (!isFloatType(in.desc.dtype)) return v;  // integers: zeros keep indices in range
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < in.desc.numel(); ++i) storeFromDouble(v.data(), in.desc.dtype, i, u(rng));
  return v;
}
}  // namespace

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
  std::vector<void*> events(reps + 1, nullptr);
  for (auto& e : events) (void)dev.eventCreate(&e);
  for (auto& r : out) {
    if (r.cached) continue;
    Status st;
    for (int w = 0; w < 3 && st; ++w) st = inst.run(r.tactic, ins, outs, ws, ws_max, stream);
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
