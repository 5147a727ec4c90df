// min_cut.cc — Dinic's maximum flow, iterative (graphs of many thousand layers must not recurse).
#include "min_cut.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>

namespace opforge::build {

namespace {
constexpr double kEps = 1e-12;  // residual capacity treated as none (times are in milliseconds)
}

Status MinCut::addEdge(int from, int to, double capacity) {
  const int n = nodes();
  if (from < 0 || to < 0 || from >= n || to >= n)
    return Status::internal("min cut: an edge " + std::to_string(from) + " -> " +
                            std::to_string(to) + " outside the " + std::to_string(n) + " nodes");
  if (!(capacity >= 0) || !std::isfinite(capacity))
    return Status::internal("min cut: capacity " + std::to_string(capacity) + " of the edge " +
                            std::to_string(from) + " -> " + std::to_string(to));
  auto& a = adj_[static_cast<size_t>(from)];
  auto& b = adj_[static_cast<size_t>(to)];
  const size_t ia = a.size(), ib = b.size() + (from == to ? 1 : 0);
  a.push_back(Edge{to, ib, std::min(capacity, kInfinite)});
  b.push_back(Edge{from, ia, 0.0});
  return Status::ok();
}

bool MinCut::levels(int s, int t) {
  level_.assign(adj_.size(), -1);
  std::deque<int> q{s};
  level_[static_cast<size_t>(s)] = 0;
  while (!q.empty()) {
    const int v = q.front();
    q.pop_front();
    for (const Edge& e : adj_[static_cast<size_t>(v)])
      if (e.cap > kEps && level_[static_cast<size_t>(e.to)] < 0) {
        level_[static_cast<size_t>(e.to)] = level_[static_cast<size_t>(v)] + 1;
        q.push_back(e.to);
      }
  }
  return level_[static_cast<size_t>(t)] >= 0;
}

double MinCut::blockingFlow(int s, int t) {
  // Paths along rising levels, found with per-node edge cursors (next_) and an explicit stack of
  // the edges taken; a node with no way on is taken out of the level graph.
  next_.assign(adj_.size(), 0);
  double total = 0;
  std::vector<std::pair<int, size_t>> path;  // (node, index of the edge taken out of it)
  int v = s;
  for (;;) {
    if (v == t) {
      double f = kInfinite;
      for (const auto& [u, i] : path) f = std::min(f, adj_[static_cast<size_t>(u)][i].cap);
      for (const auto& [u, i] : path) {
        Edge& e = adj_[static_cast<size_t>(u)][i];
        e.cap -= f;
        adj_[static_cast<size_t>(e.to)][e.rev].cap += f;
      }
      total += f;
      if (total >= kInfinite) return kInfinite;
      path.clear();
      v = s;
      continue;
    }
    auto& edges = adj_[static_cast<size_t>(v)];
    size_t& i = next_[static_cast<size_t>(v)];
    while (i < edges.size() && !(edges[i].cap > kEps && level_[static_cast<size_t>(edges[i].to)] ==
                                                            level_[static_cast<size_t>(v)] + 1))
      ++i;
    if (i < edges.size()) {
      path.emplace_back(v, i);
      v = edges[i].to;
      continue;
    }
    if (v == s) return total;
    level_[static_cast<size_t>(v)] = -1;  // a dead end
    v = path.back().first;
    path.pop_back();
    ++next_[static_cast<size_t>(v)];
  }
}

double MinCut::solve(int s, int t) {
  double flow = 0;
  if (s != t)
    while (flow < kInfinite && levels(s, t)) flow += blockingFlow(s, t);
  // The source side: what s still reaches through residual capacity.
  side_.assign(adj_.size(), false);
  std::deque<int> q{s};
  side_[static_cast<size_t>(s)] = true;
  while (!q.empty()) {
    const int v = q.front();
    q.pop_front();
    for (const Edge& e : adj_[static_cast<size_t>(v)])
      if (e.cap > kEps && !side_[static_cast<size_t>(e.to)]) {
        side_[static_cast<size_t>(e.to)] = true;
        q.push_back(e.to);
      }
  }
  return std::min(flow, kInfinite);
}

Result<std::vector<int>> solveTwoLabels(const TwoLabelProblem& p, double* total) {
  constexpr int kS = 0, kT = 1;
  const int n = static_cast<int>(p.cost.size());
  MinCut cut(2 + n);
  auto vertex = [&](int end) -> Result<int> {
    if (end == TwoLabelProblem::kLabel0) return kS;
    if (end == TwoLabelProblem::kLabel1) return kT;
    if (end < 0 || end >= n)
      return Status::internal("two-label problem: end " + std::to_string(end) + " outside the " +
                              std::to_string(n) + " vertices");
    return 2 + end;
  };
  // Skips the edges no cut can cross (out of the sink, into the source, loops).
  auto edge = [&](int a, int b, double cap) {
    return a == kT || b == kS || a == b ? Status::ok() : cut.addEdge(a, b, cap);
  };
  for (int i = 0; i < n; ++i) {
    OPFORGE_RETURN_IF_ERROR(cut.addEdge(kS, 2 + i, p.cost[static_cast<size_t>(i)][1]));
    OPFORGE_RETURN_IF_ERROR(cut.addEdge(2 + i, kT, p.cost[static_cast<size_t>(i)][0]));
  }
  for (const auto& v : p.values) {
    OPFORGE_ASSIGN_OR_RETURN(const int w, vertex(v.writer));
    const int x = cut.addNode(), y = cut.addNode();  // needed as label 1, as label 0
    OPFORGE_RETURN_IF_ERROR(edge(w, x, v.convert));  // written as 0, needed as 1
    OPFORGE_RETURN_IF_ERROR(edge(y, w, v.convert));  // written as 1, needed as 0
    for (int r : v.readers) {
      OPFORGE_ASSIGN_OR_RETURN(const int rv, vertex(r));
      OPFORGE_RETURN_IF_ERROR(edge(x, rv, MinCut::kInfinite));  // a reader of 1 needs x at 1
      OPFORGE_RETURN_IF_ERROR(edge(rv, y, MinCut::kInfinite));  // a reader of 0 needs y at 0
    }
  }
  const double t = cut.solve(kS, kT);
  if (total) *total = t;
  std::vector<int> labels(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = cut.sourceSide(2 + i) ? 0 : 1;
  return labels;
}

}  // namespace opforge::build
