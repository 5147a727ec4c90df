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

}  // namespace opforge::build
