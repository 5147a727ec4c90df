// autotune.h — timing tactics for the builder (on the GPU; on the host for ops with several CPU
// tactics), and the timing cache (internal).
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "../device/device.h"
#include "opforge/registry.h"

namespace opforge::tune {

// One input of the layer being timed: its description and, when the builder knows them, its
// real contents (constants: weights, shapes, indices). Unknown float inputs get random values,
// unknown integer inputs zeros (indices stay in range).
struct TimedInput {
  TensorDesc desc;
  const std::vector<uint8_t>* data = nullptr;
  bool present = true;
};

struct TacticTime {
  int32_t tactic = 0;
  double median_ms = -1;  // < 0: failed
  std::string error;
  bool cached = false;
  bool pruned = false;  // timed once: more than kPruneFactor times the best tactic timed before it
};

// A tactic whose second warm-up run takes more than kPruneFactor times the best median timed
// before it (and more than kPruneFloorMs) is not timed further: it cannot win, and cuDNN's
// generic engines take 10-16 ms a run on layers the best tactic runs in 0.03 ms.
constexpr double kPruneFactor = 8.0;
constexpr double kPruneFloorMs = 0.05;

class TimingCache {
 public:
  // Loads `path` if it exists (an unreadable or foreign file is reported, not fatal).
  Status load(const std::string& path, const std::string& device);
  Status save(const std::string& path, const std::string& device) const;
  std::optional<double> find(const std::string& key) const;
  void put(const std::string& key, double ms, const std::string& what);
  size_t size() const { return entries_.size(); }
  int hits = 0, misses = 0;

 private:
  struct Entry {
    double ms;
    std::string what;
  };
  std::map<std::string, Entry> entries_;
};

// The contents a timed input gets: its own data when known, else random floats in [-1, 1) or
// integer zeros.
std::vector<uint8_t> fill(const TimedInput& in, std::mt19937_64& rng);

// Times each tactic of `inst` on these descriptions: warm-up runs, then the median of `reps`
// timed runs (CUDA events), or the second warm-up run alone for a pruned tactic (TacticTime::
// pruned). A tactic that fails is reported with its error, not fatal.
std::vector<TacticTime> timeTactics(rt::DeviceApi& dev, const KernelInstance& inst,
                                    const std::vector<int32_t>& tactics,
                                    const std::vector<TimedInput>& inputs,
                                    const std::vector<TensorDesc>& outputs, TimingCache* cache,
                                    const std::string& cache_key_prefix, int reps = 10);

// The same on the CPU (host memory, the steady clock), for CPU builds of ops that declare more
// than one CPU tactic (Python ops under autotune). No timing cache: host times are not kept.
std::vector<TacticTime> timeHostTactics(const KernelInstance& inst,
                                        const std::vector<int32_t>& tactics,
                                        const std::vector<TimedInput>& inputs,
                                        const std::vector<TensorDesc>& outputs, int reps = 10);

}  // namespace opforge::tune
