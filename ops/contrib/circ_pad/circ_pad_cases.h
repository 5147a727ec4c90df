// The shapes and pads of circ_pad's GPU cases, shared with circ_pad_grad's (tests/op_cases.h).
#pragma once

#include <cstdint>
#include <vector>

namespace opforge::test::cases {

struct PadShape {
  std::vector<int64_t> dims;
  std::vector<int32_t> pads;
};

inline const std::vector<PadShape>& padShapes() {
  static const std::vector<PadShape> s = {
      {{2, 3, 5, 7}, {1, 2, 0, 3}},
      {{1, 1, 6}, {2, 2}},
      {{3, 4, 256}, {2, 2, 2, 2}},
      {{2, 5, 33}, {3, 1}},
      {{7}, {9, 4}},
      {{0, 3, 4}, {1, 1}},
      {{2, 1, 3, 2, 5}, {1, 0, 0, 2, 1, 1}},
      {{4, 260}, {0, 0, 5, 4}},
      {{2, 2, 130}, {8, 8}},
      // output rows of whole 16-byte vectors in FP32 and FP16 (the vector tactics), borders
      // wrapping more than once
      {{2, 3, 12}, {2, 2}},
      {{2, 5, 20}, {7, 5}},
      {{3, 6}, {9, 9}},
      {{2, 3, 7, 40}, {1, 2, 3, 5}},
      // enough rows that tactic 3's one-wave grid goes round several times
      {{1400, 64, 64}, {1, 1, 4, 4}},
      // rows of many vectors: a warp's rounds with a few lanes left over (1026 / 513 vectors), full
      // rounds (256 / 128)
      {{3, 2, 4096}, {4, 4}},
      {{2, 2, 1020}, {2, 2}},
      // many short rows: fewer vectors than lanes (FP32 16) or one round and two more (34)
      {{2, 40, 60}, {2, 2}},
      {{70, 130}, {3, 3}},
      // an odd number of rows: tactic 7's last pair of rows is one row
      {{5, 3, 64}, {4, 4}},
  };
  return s;
}

}  // namespace opforge::test::cases
