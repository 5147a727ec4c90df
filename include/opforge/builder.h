// opforge/builder.h — turns a NetworkDefinition into a serialized plan.
//
// The builder runs graph passes (constant folding of built-in ops, dead-node removal), checks
// every tensor's symbolic shape at each optimization profile's min/opt/max point, picks a
// type/format combination and a tactic for every node (inserting reformat nodes where neighbours
// disagree and copies where an in-place op would clobber a value still needed), plans memory by
// liveness, and writes the plan (see docs/architecture.md for the file format).
//
// Usage:
//   opforge::BuilderConfig cfg;
//   cfg.profiles.push_back(opforge::OptimizationProfile{}
//       .set("x", {1, 3, 8, 8}, {4, 3, 8, 8}, {16, 3, 8, 8}));
//   opforge::Builder b;
//   auto plan = b.buildSerializedNetwork(net, cfg);   // Result<std::vector<uint8_t>>
//   if (plan) opforge::writeFileAtomic("model.plan", *plan);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opforge/network.h"
#include "opforge/op.h"
#include "opforge/status.h"

namespace opforge {

struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};

struct OptimizationProfile {
  std::map<std::string, ShapeRange> inputs;
  OptimizationProfile& set(const std::string& input, std::vector<int64_t> min,
                           std::vector<int64_t> opt, std::vector<int64_t> max) {
    inputs[input] = ShapeRange{std::move(min), std::move(opt), std::move(max)};
    return *this;
  }
};

struct BuilderConfig {
  // One or more profiles; may be empty when the network has no dynamic dimensions.
  std::vector<OptimizationProfile> profiles;
  Backend backend = Backend::kCpu;
  // Messages for the user (progress, summary); nullptr: silent.
  std::function<void(const std::string&)> log;
  bool verbose = false;
  // Fold nodes of built-in ops whose inputs are all constant (plugins are never folded).
  bool constant_folding = true;
};

class Builder {
 public:
  explicit Builder(std::shared_ptr<Registry> registry = Registry::global());
  Result<std::vector<uint8_t>> buildSerializedNetwork(const NetworkDefinition& network,
                                                      const BuilderConfig& config);

 private:
  std::shared_ptr<Registry> registry_;
};

// Writes `bytes` to `path` atomically: a temporary file in the same folder, then rename, so a
// failure leaves no partial file. Errors name the path.
Status writeFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace opforge
