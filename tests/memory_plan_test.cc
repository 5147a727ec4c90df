// The runtime's arena layout (src/runtime/memory_plan.h) as a pure function.
#include <gtest/gtest.h>

#include <climits>

#include "runtime/memory_plan.h"

using opforge::plan::Storage;
using opforge::rt::planArena;

namespace {
// Every two storages alive at the same time get disjoint byte ranges inside the total.
void expectDisjoint(const std::vector<size_t>& bytes, const std::vector<Storage>& life) {
  auto l = planArena(bytes, life);
  ASSERT_EQ(l.offsets.size(), bytes.size());
  for (size_t a = 0; a < bytes.size(); ++a) {
    EXPECT_LE(l.offsets[a] + bytes[a], l.total) << a;
    for (size_t b = a + 1; b < bytes.size(); ++b) {
      const bool alive_together = !(life[a].last < life[b].first || life[b].last < life[a].first);
      const bool apart =
          l.offsets[a] + bytes[a] <= l.offsets[b] || l.offsets[b] + bytes[b] <= l.offsets[a];
      if (alive_together) {
        EXPECT_TRUE(apart) << a << " and " << b;
      }
    }
  }
}
}  // namespace

TEST(MemoryPlan, AChainReusesMemoryAndOverlapsAreDisjoint) {
  // x -> a -> b -> c: each value lives from its producer to its reader.
  const std::vector<size_t> bytes = {256, 512, 256, 256};
  const std::vector<Storage> life = {{-1, 0}, {0, 1}, {1, 2}, {2, INT32_MAX}};
  auto l = planArena(bytes, life);
  EXPECT_EQ(l.total, 768u);     // the largest plus one neighbour at a time
  EXPECT_EQ(l.offsets[1], 0u);  // largest first, at 0
  EXPECT_EQ(l.offsets[0], 512u);
  EXPECT_EQ(l.offsets[2], 512u);
  EXPECT_EQ(l.offsets[3], 0u);  // a is dead by step 2
  expectDisjoint(bytes, life);
}

TEST(MemoryPlan, StoragesAliveTogetherNeverShareBytes) {
  const std::vector<size_t> bytes = {1024, 256, 768, 256, 512, 256};
  const std::vector<Storage> life = {{0, 5}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {-1, INT32_MAX}};
  expectDisjoint(bytes, life);
  // Everything alive at once: the sum.
  const std::vector<Storage> all(bytes.size(), Storage{0, 9});
  EXPECT_EQ(planArena(bytes, all).total, 1024u + 256 + 768 + 256 + 512 + 256);
  expectDisjoint(bytes, all);
}

TEST(MemoryPlan, ADeadStoragesBytesAreReusedAndNoStorageIsNoArena) {
  // c spans everything; b, alive only after a died, takes a's bytes.
  const std::vector<size_t> bytes = {512, 256, 1024};
  const std::vector<Storage> life = {{0, 1}, {2, 3}, {0, 3}};
  auto l = planArena(bytes, life);
  EXPECT_EQ(l.offsets[2], 0u);
  EXPECT_EQ(l.offsets[0], 1024u);
  EXPECT_EQ(l.offsets[1], 1024u);
  EXPECT_EQ(l.total, 1536u);
  EXPECT_EQ(planArena({}, {}).total, 0u);
  EXPECT_TRUE(planArena({}, {}).offsets.empty());
}
