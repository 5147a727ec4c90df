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
//   if (plan) opforge::writeFileAtomic("model.plan", *plan);   // opforge/io.h, included here
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opforge/io.h"  // writeFileAtomic, how plans are written
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
  // kCpu: every layer runs its CPU reference, or the fastest of its CPU tactics (timed on the
  // host) when it has several. kCuda: the builder times every applicable (combination, tactic)
  // of every layer on the GPU at the first profile's opt shapes; no CUDA tactic: CPU (reported).
  Backend backend = Backend::kCpu;
  // Precision: the graph's types rule (strong typing). With fp16/bf16 the builder may run an op
  // in reduced precision where its combinations allow it, inserting casts at the boundaries.
  bool fp16 = false;
  bool bf16 = false;
  // Layers kept in their graph precision (FP32) under fp16/bf16, like trtexec's
  // --layerPrecisions=NAME:fp32. Each entry is a node-name pattern ('*' matches any run of
  // characters; fused nodes are named "<a>+<b>+...") or an op ("LayerNormalization",
  // "opforge::FusedAttention"). Example: {"opforge::FusedAddLayerNorm", "*/attn/*"}.
  std::vector<std::string> fp32_layers;
  // FP32 convolutions and GEMMs may run on TF32 tensor cores (inputs rounded to a 10-bit mantissa,
  // FP32 accumulation): tactics marked TacticDef::tf32 are candidates. On by default, as in
  // TensorRT (kTF32) and in PyTorch's cuDNN convolutions; false (`opforge exec --noTF32`) keeps
  // FP32 layers in full FP32 arithmetic.
  bool tf32 = true;
  // Tactics the user picks instead of the timing (what TensorRT's algorithm selector did), for
  // checking one tactic through the whole engine or working around a slow one: entries
  // "PATTERN=TACTIC" (split at the first '='), PATTERN as in fp32_layers (a node-name glob or an
  // op), TACTIC a tactic's id or name as `opforge ops` lists them ("cuda.flash", "3"), or
  // "reference" (0: the CPU reference; in a CUDA build the layer then runs on the CPU). The first
  // matching entry counts. Errors: an op with no such tactic, a tactic of the other backend, a
  // pinned tactic that does not apply to the layer at its types, formats and profile shapes, an
  // entry that matches no layer.
  // Example: {"opforge::FusedAttention=cuda.flash", "*/conv1=reference"}.
  std::vector<std::string> layer_tactics;
  // Timing cache (CUDA builds): read if it exists, updated after the build.
  std::string timing_cache_file;
  // Messages for the user (summary, warnings); nullptr: silent.
  std::function<void(const std::string&)> log;
  // Progress while timing: (layers done, layers total, current layer, tactics tried so far).
  std::function<void(int, int, const std::string&, int)> progress;
  bool verbose = false;
  // Fold nodes of built-in ops whose inputs are all constant (plugins are never folded).
  bool constant_folding = true;
  // Graph passes not to run, by name (as a verbose build lists them: "se_fusion", "gemm_fusion"),
  // like ONNX Runtime's disabled optimizers: to compare a plan with and without a rewrite, or to
  // step around one that hurts a model. A name no registered pass has is an error that lists the
  // passes. Passes that only optimize may be turned off freely; turning off one that lowers a node
  // to an op with a tactic can leave a node no backend runs, which the build then reports.
  // Example: {"se_fusion", "patch_merge"}.
  std::vector<std::string> disabled_passes;
};

class Builder {
 public:
  explicit Builder(std::shared_ptr<Registry> registry = Registry::global());
  Result<std::vector<uint8_t>> buildSerializedNetwork(const NetworkDefinition& network,
                                                      const BuilderConfig& config);

 private:
  std::shared_ptr<Registry> registry_;
};

}  // namespace opforge
