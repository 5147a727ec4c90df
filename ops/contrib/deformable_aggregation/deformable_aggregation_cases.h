// The problems of DeformableAggregation's GPU cases, shared with DeformableAggregationGrad's
// (tests/op_cases.h).
#pragma once

#include <string>
#include <vector>

#include "ops/contrib/deformable_aggregation/da_problem.h"

namespace opforge::test::cases {

inline std::vector<DaProblem> daProblems(DataType t) {
  std::vector<DaProblem> ps;
  auto add = [&](DaProblem p) {
    p.feat_type = t;
    ps.push_back(p);
  };
  DaProblem p;
  add(p);           // small, mixed valid/masked points with NaN/Inf
  p = DaProblem{};  // Sparse4D-like channels (C/G = 32) and > 256 samples per anchor (several
                    // rounds)
  p.A = 37, p.P = 13, p.Ncam = 6, p.C = 256, p.G = 8, p.levels = {{8, 22}, {4, 11}, {2, 6}, {1, 3}};
  add(p);
  p = DaProblem{};  // C/G = 3: one channel per vector
  p.C = 6, p.G = 2, p.A = 9;
  add(p);
  p = DaProblem{};  // C/G = 4, B = 2, all points valid
  p.B = 2, p.C = 12, p.G = 3, p.valid = 1.0;
  add(p);
  p = DaProblem{};  // wide: more channel vectors than threads in a block
  p.A = 3, p.P = 2, p.C = 4096, p.G = 2, p.valid = 0.9;
  add(p);
  p = DaProblem{};  // few valid points
  p.A = 16, p.P = 5, p.Ncam = 3, p.C = 64, p.G = 4, p.valid = 0.1;
  add(p);
  return ps;
}

inline std::string daName(const DaProblem& p) {
  return "B" + std::to_string(p.B) + " A" + std::to_string(p.A) + " P" + std::to_string(p.P) +
         " Ncam" + std::to_string(p.Ncam) + " C" + std::to_string(p.C) + " G" +
         std::to_string(p.G) + " valid " + std::to_string(p.valid);
}

}  // namespace opforge::test::cases
