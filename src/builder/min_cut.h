// min_cut.h — a minimum s-t cut of a small directed graph with real capacities (internal).
//
// The builder's precision plan (precision.cc) labels each layer "graph type" or "reduced
// precision" by one cut: a layer on the source side keeps the graph's type. Contract:
//   - nodes are 0..n-1 (addNode() returns the next); capacities are >= 0, `kInfinite` for an edge
//     that must never be cut; an edge with a non-finite or negative capacity is an error;
//   - solve(s, t) returns the cut's capacity (the maximum flow, Dinic's algorithm) and then
//     sourceSide(v) says whether v is reachable from s in the residual graph (the minimal source
//     set: ties go to the sink side);
//   - a cut of kInfinite or more means every cut crosses an uncuttable edge.
// Usage:
//   MinCut g(2);                       // s = 0, t = 1
//   int a = g.addNode();
//   g.addEdge(0, a, 3.0);              // paid when a ends on the sink side
//   g.addEdge(a, 1, 1.0);              // paid when a ends on the source side
//   double cut = g.solve(0, 1);        // 1.0; g.sourceSide(a) is true
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "opforge/status.h"

namespace opforge::build {

class MinCut {
 public:
  static constexpr double kInfinite = 1e30;

  explicit MinCut(int nodes = 0) : adj_(static_cast<size_t>(nodes)) {}
  int addNode() {
    adj_.emplace_back();
    return static_cast<int>(adj_.size()) - 1;
  }
  int nodes() const { return static_cast<int>(adj_.size()); }
  Status addEdge(int from, int to, double capacity);
  double solve(int s, int t);
  bool sourceSide(int v) const {
    return v >= 0 && static_cast<size_t>(v) < side_.size() && side_[static_cast<size_t>(v)];
  }

 private:
  struct Edge {
    int to;
    size_t rev;  // index of the reverse edge in adj_[to]
    double cap;
  };
  bool levels(int s, int t);
  double blockingFlow(int s, int t);
  std::vector<std::vector<Edge>> adj_;
  std::vector<int> level_;
  std::vector<size_t> next_;
  std::vector<bool> side_;
};

// A labeling with two labels (0 and 1) whose cost is one per vertex and label, plus, for each
// value, `convert` once if some reader's label is 1 and its writer's is 0, and once more if some
// reader's label is 0 and its writer's is 1 (a conversion made once, however many read it). Writers
// and readers are vertices, or kLabel0 / kLabel1 for an end whose label is fixed. The builder's
// precision plan: label 1 is reduced precision, a value an activation, `convert` its cast.
struct TwoLabelProblem {
  static constexpr int kLabel0 = -1, kLabel1 = -2;
  struct Value {
    int writer = kLabel0;
    std::vector<int> readers;
    double convert = 0;
  };
  std::vector<std::array<double, 2>> cost;  // per vertex: label 0, label 1 (>= 0, finite)
  std::vector<Value> values;
};

// The labels of least total cost (ties go to label 1) and that total; an error names a negative or
// non-finite cost or an end outside the vertices. Solved as one minimum cut: a vertex on the
// source side takes label 0; per value two auxiliary vertices (the value is needed as label 1, as
// label 0) that every reader of that label forces to its side.
Result<std::vector<int>> solveTwoLabels(const TwoLabelProblem& p, double* total = nullptr);

}  // namespace opforge::build
