// build_state.h — one build in progress (internal): the graph being lowered, the profiles and the
// choices made so far. builder.cc checks profiles and shapes and runs the phases, combos.cc
// chooses each node's combination, formats.cc inserts the formats it needs (reformats, casts,
// in-place copies), autotune.cc and autotune_cpu.cc time tactics, plan_writer.cc writes the plan.
#pragma once

#include "opforge/builder.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

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

namespace opforge::build {

// Whether `pattern` names the node: its op ("ns::name" or "name") or a glob ('*': any run of
// characters) over its name (fused nodes: "<a>+<b>+..."). BuilderConfig::fp32_layers and
// layer_tactics.
bool layerMatches(const graph::Node& node, const std::string& pattern);

// The error for a layer_tactics pin (tactic `id`) that does not apply to `node` (autotune.cc).
Status pinNotApplicable(const std::string& source, const graph::Node& node, int32_t id);

using graph::Graph;
using graph::Node;
using graph::Value;

inline std::string baseName(const std::string& path) {
  size_t s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

// The late rewrites that need the chosen formats, run in `order` after chooseFormats, each with
// its own number (a verbose build lists them as "post-format passes run, in order: ..."):
// output_formats (network outputs in the format asked for, LINEAR by default), cast_pairs (a
// cast to FP16 and straight back goes), constant_reformats (reformats of constants run at build
// time: the plan stores the converted weight), alias_copies (a copy before an in-place op whose
// input is still needed, or is a network input or constant).
std::vector<graph::PassInfo> postFormatPasses();

class BuildState {
 public:
  BuildState(Graph g, const BuilderConfig& cfg, std::shared_ptr<Registry> reg)
      : g_(std::move(g)), cfg_(cfg), reg_(std::move(reg)) {}

  Result<std::vector<uint8_t>> run();

  // The post-format passes in the order they run (postFormatPasses() lists names and numbers).
  struct PostFormatPass {
    const char* name;
    int order;
    Status (BuildState::*run)();
  };
  static const std::vector<PostFormatPass>& postFormatTable();

 private:
  void log(const std::string& m) const {
    if (cfg_.log) cfg_.log(m);
  }
  Status checkProfiles();
  Status checkShapesAtProfiles();
  Status chooseFormats();
  // chooseFormats, one node at a time. A node's positions as it sees them, copied (insertReformat
  // may grow g_.nodes): the formats and types its layer reads and writes, and its combo text.
  struct NodeChoice {
    int n = -1;
    const OpSchema* schema = nullptr;
    std::vector<int> inputs, outputs, aliases;
    size_t nd = 0;  // declared outputs
    std::string label;
    std::vector<DataType> lowerable;  // the reduced types it may run in (none when kept in FP32)
    std::vector<Format> in_f, out_f;
    std::vector<DataType> in_t, out_t;
    std::string combo_text;
    // The declared input a node input takes its combination entry from (variadic tails).
    size_t declPos(size_t i) const { return std::min(i, schema->inputs.size() - 1); }
  };
  // The valid combinations of a node with their scores (lower is better), in the op's order, and
  // every combination the op has (for the error message).
  struct ScoredCombos {
    std::vector<std::pair<double, ConcreteCombo>> valid;
    std::vector<DataType> lowered;  // per valid combination: ComboFit::lowered
    std::string accepted;
  };
  // The types and formats a combination has a node's layer read and write (its inputs keep
  // their value's format where it is effectively the same).
  struct Placement {
    std::vector<DataType> ti, to;
    std::vector<Format> fi, fo;
  };
  Placement placement(const NodeChoice& c, const ConcreteCombo& cc) const;
  using ReformatCache = std::map<std::tuple<int, Format, DataType>, int>;  // -> converted value
  // combos.cc: the values some reader of which takes only LINEAR; node n's starting choice; its
  // graph types as text; its valid combinations, the fastest on CUDA, the error when none fits;
  // chooseCombo puts the chosen combination's formats and types into `c`.
  std::set<int> linearReaders() const;
  NodeChoice nodeChoice(int n, const std::vector<DataType>& reduced) const;
  std::string typeList(const NodeChoice& c) const;
  Result<ScoredCombos> scoreCombos(const NodeChoice& c, const std::vector<DataType>& reduced) const;
  Result<std::optional<ConcreteCombo>> fastestCombo(const NodeChoice& c, const ScoredCombos& sc,
                                                    const std::set<int>& linear_readers);
  Status noComboError(const NodeChoice& c, const std::string& accepted) const;
  Status chooseCombo(NodeChoice& c, const std::vector<DataType>& reduced,
                     const std::set<int>& linear_readers);
  // precision.cc: with --fp16/--bf16 on CUDA, which layers run in reduced precision, chosen for
  // the whole graph at once (reduced_layer_): each layer's best time in either precision, and
  // each FP32 activation's conversion when its producer and a reader differ, minimized by one
  // minimum cut. chooseCombo then keeps a layer's combinations of its label.
  Status planPrecision(const std::vector<DataType>& reduced);
  static bool inPrecision(DataType lowered, bool want_reduced,
                          const std::vector<DataType>& reduced) {
    const bool is_reduced = std::find(reduced.begin(), reduced.end(), lowered) != reduced.end();
    return want_reduced ? is_reduced : !is_reduced;
  }
  std::map<int, bool> reduced_layer_;  // node -> runs in reduced precision
  // formats.cc: reformats of node c.n's inputs to the chosen formats and types (shared through
  // `cache`), casts of its reduced-precision outputs back to the graph's types (`remap`).
  Status reformatInputs(NodeChoice& c, ReformatCache& cache, std::vector<int>& new_order);
  Status castOutputsBack(const NodeChoice& c, std::map<int, int>& remap,
                         std::vector<int>& new_order);
  Status runPostFormatPasses();
  // The post-format passes (postFormatPasses()).
  Status reformatOutputs();
  Status insertAliasCopies();
  Status chooseTactics();
  Status chooseCpuTactics();  // autotune_cpu.cc
  // views.cc: the node's view tactic (TacticDef::in_place) of the build's backend that applies at
  // every profile corner, or -1; placeViews runs the chosen views in their inputs' storage.
  Result<int32_t> viewTactic(const Node& node) const;
  // The node's input and output descriptions as placed (its values' types and formats) with dims
  // evaluated by `look`; an omitted input is an empty description.
  struct NodeDescs {
    std::vector<TensorDesc> in, out;
  };
  Result<NodeDescs> placedDescs(const Node& node, const DimExpr::Lookup& look) const;
  Status placeViews();
  Result<std::vector<uint8_t>> writePlan();

  Result<int> insertReformat(int value, Format to, DataType to_dtype, const std::string& why);
  Status removeCastPairs();
  Status foldConstantReformats();
  // Symbol values at a profile point (0 min, 1 opt, 2 max). Data-dependent sizes take their opt
  // value at the opt point unless `sizes_at_upper` (what buffers must hold), else their upper
  // bound.
  Result<shapes::Evaluator> bindings(size_t profile, int point, bool sizes_at_upper = false) const;

  Graph g_;
  const BuilderConfig& cfg_;
  std::shared_ptr<Registry> reg_;
  std::vector<OptimizationProfile> profiles_;
  // Tuning: the device and the timing cache (CUDA builds), the point tactics are timed at, the
  // profile corners.
  rt::DeviceApi* dev_ = nullptr;  // null in CPU builds
  bool tuning_ready_ = false;
  std::string gpu_;
  tune::TimingCache cache_;
  shapes::Evaluator tune_point_;
  std::vector<shapes::Evaluator> corners_;
  // Data-dependent sizes with no upper bound (opforge::ReadValues): a layer whose dims name one
  // is not timed, its shapes being known only when it runs.
  std::set<std::string> run_sized_;
  struct NodeTiming {
    int32_t tactic = -1;  // -1: no tactic of the build's backend applies
    double ms = 0;
    int tried = 0;
  };
  Status prepareTuning();
  // timeNode at the node's chosen types and formats (those of its values), its allowed tactics.
  Result<NodeTiming> timeNodeAsPlaced(const Node& node);
  Result<NodeTiming> timeNode(const Node& node, const std::vector<DataType>& in_t,
                              const std::vector<Format>& in_f, const std::vector<DataType>& out_t,
                              const std::vector<Format>& out_f,
                              const std::vector<int32_t>& allowed);
  Result<double> timeReformat(int value, Format to_f, DataType to_t);
  // What a layer pays to read `value` as (to_f, to_t): nothing when the value, or the
  // reduced-precision original it is a cast of (reduced_of_), is already in that type and
  // format; else the timed reformat from that original (fewer bytes than from the cast).
  Result<double> inputCost(int value, Format to_f, DataType to_t);
  // BuilderConfig::layer_tactics: the tactic pinned for `node` (nullopt: none; 0: the CPU
  // reference), an error naming the entry for a tactic the op lacks or one of the other backend.
  // Marks the entry used; checkPinsUsed() fails for an entry that matched no layer.
  Result<std::optional<int32_t>> pinnedTactic(const Node& node);
  Status checkPinsUsed() const;
  std::vector<bool> pins_used_;
  std::vector<int> order_;  // node indices in execution order
  // chooseFormats: a cast back to the graph's type -> the reduced-precision value it was cast
  // from. A reader that wants another type or format converts the original, not the cast.
  std::map<int, int> reduced_of_;
  int reformats_ = 0, copies_ = 0, folded_reformats_ = 0;
  std::map<std::string, int> pass_counters_;
};

}  // namespace opforge::build
