// The builder's minimum cut (src/builder/min_cut.h) against every labeling of small random
// problems: the cut's capacity is the least energy, and its source side is a labeling that has it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "builder/min_cut.h"

using opforge::build::MinCut;

namespace {
struct Problem {
  int n = 0;
  std::vector<double> cost_source, cost_sink;       // paid when node i is on that side
  std::vector<std::tuple<int, int, double>> pairs;  // c paid when a is on the source side, b not
  double energy(unsigned mask) const {              // bit i set: node i on the source side
    double e = 0;
    for (int i = 0; i < n; ++i) e += (mask >> i & 1u) ? cost_source[i] : cost_sink[i];
    for (const auto& [a, b, c] : pairs)
      if ((mask >> a & 1u) && !(mask >> b & 1u)) e += c;
    return e;
  }
};
}  // namespace

TEST(MinCut, EqualsTheLeastEnergyOfEveryLabelingOfRandomProblems) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> cost(0.0, 1.0);
  for (int trial = 0; trial < 400; ++trial) {
    Problem p;
    p.n = 1 + static_cast<int>(rng() % 10);
    for (int i = 0; i < p.n; ++i) {
      p.cost_source.push_back(rng() % 5 == 0 ? 0.0 : cost(rng));
      p.cost_sink.push_back(rng() % 7 == 0 ? MinCut::kInfinite : cost(rng));
    }
    const int pairs = static_cast<int>(rng() % 25);
    for (int k = 0; k < pairs; ++k)
      p.pairs.emplace_back(static_cast<int>(rng() % p.n), static_cast<int>(rng() % p.n),
                           rng() % 6 == 0 ? MinCut::kInfinite : cost(rng));
    MinCut g(2);
    std::vector<int> id;
    for (int i = 0; i < p.n; ++i) id.push_back(g.addNode());
    for (int i = 0; i < p.n; ++i) {
      ASSERT_TRUE(g.addEdge(0, id[i], p.cost_sink[i]).isOk());
      ASSERT_TRUE(g.addEdge(id[i], 1, p.cost_source[i]).isOk());
    }
    for (const auto& [a, b, c] : p.pairs) ASSERT_TRUE(g.addEdge(id[a], id[b], c).isOk());
    const double cut = g.solve(0, 1);
    double best = MinCut::kInfinite * 4;
    for (unsigned m = 0; m < (1u << p.n); ++m) best = std::min(best, p.energy(m));
    unsigned chosen = 0;
    for (int i = 0; i < p.n; ++i)
      if (g.sourceSide(id[i])) chosen |= 1u << i;
    EXPECT_TRUE(g.sourceSide(0));
    EXPECT_FALSE(g.sourceSide(1)) << "trial " << trial;
    if (best >= MinCut::kInfinite) {
      EXPECT_GE(cut, MinCut::kInfinite) << "trial " << trial;
      continue;
    }
    EXPECT_NEAR(cut, best, 1e-9) << "trial " << trial;
    EXPECT_NEAR(p.energy(chosen), best, 1e-9) << "trial " << trial;
  }
}

TEST(MinCut, ALongChainNeedsNoRecursion) {
  // 200,000 nodes in a row (a deep graph): the cut is the cheapest link.
  const int n = 200000;
  MinCut g(2);
  int prev = 0;
  for (int i = 0; i < n; ++i) {
    const int v = g.addNode();
    ASSERT_TRUE(g.addEdge(prev, v, i == n / 2 ? 0.25 : 1.0 + (i % 7)).isOk());
    prev = v;
  }
  ASSERT_TRUE(g.addEdge(prev, 1, 3.0).isOk());
  EXPECT_DOUBLE_EQ(g.solve(0, 1), 0.25);
  EXPECT_TRUE(g.sourceSide(2 + n / 2 - 1));
  EXPECT_FALSE(g.sourceSide(2 + n / 2));
}

TEST(MinCut, RefusesBadCapacitiesAndNodes) {
  MinCut g(2);
  EXPECT_FALSE(g.addEdge(0, 1, -1.0).isOk());
  EXPECT_FALSE(g.addEdge(0, 1, std::nan("")).isOk());
  EXPECT_FALSE(g.addEdge(0, 2, 1.0).isOk());
  EXPECT_FALSE(g.addEdge(-1, 1, 1.0).isOk());
  ASSERT_TRUE(g.addEdge(0, 1, MinCut::kInfinite).isOk());
  EXPECT_GE(g.solve(0, 1), MinCut::kInfinite);
}
