#include "memory_plan.h"

#include <algorithm>
#include <utility>

namespace opforge::rt {

ArenaLayout planArena(const std::vector<size_t>& bytes,
                      const std::vector<plan::Storage>& lifetimes) {
  const size_t n = std::min(bytes.size(), lifetimes.size());
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  ArenaLayout l;
  l.offsets.assign(n, 0);
  std::vector<size_t> placed;
  for (size_t s : idx) {
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t q : placed) {
      const bool overlap =
          !(lifetimes[q].last < lifetimes[s].first || lifetimes[s].last < lifetimes[q].first);
      if (overlap) busy.emplace_back(l.offsets[q], l.offsets[q] + bytes[q]);
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + bytes[s] <= b) break;
      off = std::max(off, e);
    }
    l.offsets[s] = off;
    l.total = std::max(l.total, off + bytes[s]);
    placed.push_back(s);
  }
  return l;
}

}  // namespace opforge::rt
