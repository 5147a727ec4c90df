// memory_plan.h — where each storage of a plan lives in an execution context's arena (internal).
//
// A pure function of the storages' sizes and lifetimes, so the runtime's arena layout is tested
// on its own (tests/memory_plan_test.cc). Contract:
//   - two storages whose lifetimes overlap ([first, last] node steps, inclusive) get disjoint
//     byte ranges; storages never alive together may share bytes;
//   - storages are placed largest first, each at the lowest offset that overlaps no storage
//     already placed and alive at the same time (greedy best offset); equal sizes keep no
//     promised order, but the same input always gives the same layout;
//   - sizes are used as given (the runtime rounds them up to its 256-byte alignment first, so
//     every offset is aligned too).
#pragma once

#include <cstddef>
#include <vector>

#include "../plan/plan.h"

namespace opforge::rt {

struct ArenaLayout {
  std::vector<size_t> offsets;  // per storage
  size_t total = 0;             // arena bytes needed
};

// `bytes[s]` and `lifetimes[s]` describe storage s (the same length).
ArenaLayout planArena(const std::vector<size_t>& bytes,
                      const std::vector<plan::Storage>& lifetimes);

}  // namespace opforge::rt
