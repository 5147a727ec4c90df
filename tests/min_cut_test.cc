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

namespace {
using opforge::build::TwoLabelProblem;
// The problem's total for labels given as bits (vertex i has label (mask >> i) & 1).
double twoLabelTotal(const TwoLabelProblem& p, unsigned mask) {
  auto label = [&](int end) {
    if (end == TwoLabelProblem::kLabel0) return 0;
    if (end == TwoLabelProblem::kLabel1) return 1;
    return static_cast<int>((mask >> end) & 1u);
  };
  double t = 0;
  for (size_t i = 0; i < p.cost.size(); ++i) t += p.cost[i][(mask >> i) & 1u];
  for (const auto& v : p.values) {
    bool up = false, down = false;  // a reader of 1 while written as 0, and the other way
    for (int r : v.readers) {
      up = up || (label(v.writer) == 0 && label(r) == 1);
      down = down || (label(v.writer) == 1 && label(r) == 0);
    }
    t += (up ? v.convert : 0) + (down ? v.convert : 0);
  }
  return t;
}
}  // namespace

TEST(MinCut, TwoLabelsPayEachConversionOncePerDirectionAndMatchEveryLabeling) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> cost(0.0, 1.0);
  auto randomEnd = [&](int n) {
    const int k = static_cast<int>(rng() % static_cast<unsigned>(n + 2));
    return k == n ? TwoLabelProblem::kLabel0 : k == n + 1 ? TwoLabelProblem::kLabel1 : k;
  };
  for (int trial = 0; trial < 500; ++trial) {
    TwoLabelProblem p;
    const int n = 1 + static_cast<int>(rng() % 9);
    for (int i = 0; i < n; ++i) p.cost.push_back({cost(rng), cost(rng)});
    const int values = static_cast<int>(rng() % 12);
    for (int k = 0; k < values; ++k) {
      TwoLabelProblem::Value v;
      v.writer = randomEnd(n);
      const int readers = 1 + static_cast<int>(rng() % 4);
      for (int r = 0; r < readers; ++r) v.readers.push_back(randomEnd(n));
      v.convert = 2 * cost(rng);
      p.values.push_back(v);
    }
    double total = -1;
    auto labels = opforge::build::solveTwoLabels(p, &total);
    ASSERT_TRUE(labels.isOk()) << labels.status().message();
    ASSERT_EQ(labels->size(), static_cast<size_t>(n));
    unsigned chosen = 0;
    for (int i = 0; i < n; ++i) chosen |= static_cast<unsigned>((*labels)[i]) << i;
    double best = 1e300;
    for (unsigned m = 0; m < (1u << n); ++m) best = std::min(best, twoLabelTotal(p, m));
    EXPECT_NEAR(total, best, 1e-9) << "trial " << trial;
    EXPECT_NEAR(twoLabelTotal(p, chosen), best, 1e-9) << "trial " << trial;
  }
}

TEST(MinCut, TwoLabelsTieGoesToLabelOneAndALongChainConvertsOnlyAtItsEnds) {
  // Equal costs: label 1.
  TwoLabelProblem tie;
  tie.cost = {{0.5, 0.5}};
  auto l = opforge::build::solveTwoLabels(tie);
  ASSERT_TRUE(l.isOk());
  EXPECT_EQ((*l)[0], 1);
  // The sticky chain: 50 layers between a network input and output fixed at label 0, each 0.5
  // cheaper at label 1, a conversion dearer (4.0) than one layer gains. Walking it layer by layer
  // keeps label 0 throughout (50.0); the cut converts once at each end (25.0 + 8.0).
  TwoLabelProblem chain;
  int prev = TwoLabelProblem::kLabel0;
  for (int i = 0; i < 50; ++i) {
    chain.cost.push_back({1.0, 0.5});
    chain.values.push_back({prev, {i}, 4.0});
    prev = i;
  }
  chain.values.push_back({prev, {TwoLabelProblem::kLabel0}, 4.0});
  double total = 0;
  auto c = opforge::build::solveTwoLabels(chain, &total);
  ASSERT_TRUE(c.isOk());
  for (int v : *c) EXPECT_EQ(v, 1);
  EXPECT_NEAR(total, 33.0, 1e-9);
  // Ten such layers gain 5.0, less than the two conversions: label 0 throughout.
  TwoLabelProblem short_chain;
  prev = TwoLabelProblem::kLabel0;
  for (int i = 0; i < 10; ++i) {
    short_chain.cost.push_back({1.0, 0.5});
    short_chain.values.push_back({prev, {i}, 4.0});
    prev = i;
  }
  short_chain.values.push_back({prev, {TwoLabelProblem::kLabel0}, 4.0});
  auto sc = opforge::build::solveTwoLabels(short_chain, &total);
  ASSERT_TRUE(sc.isOk());
  for (int v : *sc) EXPECT_EQ(v, 0);
  EXPECT_NEAR(total, 10.0, 1e-9);
  // Bad input: an end outside the vertices, a negative cost.
  TwoLabelProblem bad;
  bad.cost = {{1.0, 1.0}};
  bad.values.push_back({3, {0}, 1.0});
  EXPECT_FALSE(opforge::build::solveTwoLabels(bad).isOk());
  bad.values.clear();
  bad.cost = {{-1.0, 1.0}};
  EXPECT_FALSE(opforge::build::solveTwoLabels(bad).isOk());
}
