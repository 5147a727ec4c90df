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

}  // namespace opforge::build
