// precision.cc — the precision plan of an --fp16/--bf16 CUDA build: which layers run in reduced
// precision, decided for the whole graph before chooseFormats walks it.
//
// Walking the graph and taking each layer's fastest combination alone (reformat of its inputs
// included) sticks: a layer that reads FP32 pays a conversion to run in FP16, so at small sizes,
// where a conversion costs as much as a layer (a few microseconds), a whole FP32 chain stays FP32
// even where FP16 throughout would be faster (BERT at batch 1 kept its GEMMs in FP32, with two
// conversions a layer around the FP16-only attention). Here every layer that may run either way
// gets two costs, its best time in reduced precision and at the graph's types, and every FP32
// activation a conversion cost, paid once if some reader takes it in the other precision than its
// producer writes (once more for the other direction): a binary labeling whose energy is a sum of
// such terms is minimized exactly by a minimum s-t cut (solveTwoLabels, min_cut.h; ties go to
// reduced precision).
#include "build_state.h"
#include "min_cut.h"

namespace opforge::build {

Status BuildState::planPrecision(const std::vector<DataType>& reduced) {
  reduced_layer_.clear();
  if (cfg_.backend != Backend::kCuda || reduced.empty()) return Status::ok();
  OPFORGE_RETURN_IF_ERROR(prepareTuning());
  if (!dev_) return Status::ok();
  TwoLabelProblem problem;    // label 0: the graph's types; 1: reduced precision
  std::map<int, int> vertex;  // node with a choice -> its vertex
  for (int n : order_) {
    NodeChoice c = nodeChoice(n, reduced);
    if (c.schema->combos.empty()) continue;  // runs at the graph's types (label 0)
    OPFORGE_ASSIGN_OR_RETURN(ScoredCombos sc, scoreCombos(c, reduced));
    bool has_graph = false, has_reduced = false;
    for (DataType t : sc.lowered) {
      has_graph = has_graph || t == DataType::kFloat32;
      has_reduced = has_reduced || inPrecision(t, true, reduced);
    }
    if (has_graph != has_reduced) {
      reduced_layer_[n] = has_reduced;
      continue;
    }
    if (!has_graph) continue;                                 // no FP32 position: nothing to decide
    double best[2] = {MinCut::kInfinite, MinCut::kInfinite};  // graph, reduced
    for (size_t k = 0; k < sc.valid.size(); ++k) {
      if (sc.lowered[k] == DataType::kUndefined) continue;
      const Placement p = placement(c, sc.valid[k].second);
      OPFORGE_ASSIGN_OR_RETURN(NodeTiming t, timeNode(g_.nodes[n], p.ti, p.fi, p.to, p.fo,
                                                      sc.valid[k].second.tactic_ids));
      if (t.tactic < 0) continue;
      double& b = best[inPrecision(sc.lowered[k], true, reduced) ? 1 : 0];
      b = std::min(b, std::max(0.0, t.ms));
    }
    if (best[0] >= MinCut::kInfinite && best[1] >= MinCut::kInfinite) continue;  // CPU layer
    if (best[0] >= MinCut::kInfinite || best[1] >= MinCut::kInfinite) {
      reduced_layer_[n] = best[1] < MinCut::kInfinite;
      continue;
    }
    vertex[n] = static_cast<int>(problem.cost.size());
    problem.cost.push_back({best[0], best[1]});
  }
  if (vertex.empty()) return Status::ok();
  // A node's end: its vertex, or a fixed label for a layer whose precision is settled (the
  // graph's inputs and outputs, layers with one precision or none timed: the graph's types).
  auto end = [&](int n) {
    if (auto it = vertex.find(n); it != vertex.end()) return it->second;
    auto it = reduced_layer_.find(n);
    return it != reduced_layer_.end() && it->second ? TwoLabelProblem::kLabel1
                                                    : TwoLabelProblem::kLabel0;
  };
  std::map<int, std::vector<int>> readers;  // FP32 activation -> the ends reading it
  for (int n : order_)
    for (int v : g_.nodes[n].inputs)
      if (v >= 0 && g_.values[v].dtype == DataType::kFloat32 && !g_.values[v].constant)
        readers[v].push_back(end(n));
  for (int v : g_.outputs)  // a network output is read at the graph's type
    if (v >= 0 && g_.values[v].dtype == DataType::kFloat32 && !g_.values[v].constant)
      readers[v].push_back(TwoLabelProblem::kLabel0);
  for (auto& [v, rs] : readers) {
    const int w =
        g_.values[v].producer >= 0 ? end(g_.values[v].producer) : TwoLabelProblem::kLabel0;
    if (w < 0 && std::all_of(rs.begin(), rs.end(), [](int r) { return r < 0; })) continue;
    OPFORGE_ASSIGN_OR_RETURN(double conv, timeReformat(v, g_.values[v].format, reduced[0]));
    problem.values.push_back({w, std::move(rs), conv});
  }
  // Every cost is a finite timing and each value's two needs are free vertices: the cut is finite.
  double total = 0;
  OPFORGE_ASSIGN_OR_RETURN(const std::vector<int> labels, solveTwoLabels(problem, &total));
  int lowered = 0;
  double all_reduced = 0, all_graph = 0;
  for (const auto& [n, v] : vertex) {
    const bool r = labels[static_cast<size_t>(v)] == 1;
    const auto& cost = problem.cost[static_cast<size_t>(v)];
    reduced_layer_[n] = r;
    lowered += r ? 1 : 0;
    all_graph += cost[0];
    all_reduced += cost[1];
    if (cfg_.verbose)
      log("  precision: " + g_.nodes[n].name + ": " + dtypeName(reduced[0]) + " " +
          std::to_string(cost[1]) + " ms, FP32 " + std::to_string(cost[0]) + " ms -> " +
          (r ? dtypeName(reduced[0]) : std::string("FP32")));
  }
  char line[320];
  std::snprintf(line, sizeof(line),
                "precision plan: %d of %zu layers with a choice run in reduced precision "
                "(%zu activations weighed; layers and conversions %.4f ms; the layers alone: "
                "%.4f ms all reduced, %.4f ms all FP32)",
                lowered, vertex.size(), problem.values.size(), total, all_reduced, all_graph);
  log(line);
  return Status::ok();
}

}  // namespace opforge::build
