// The GPU test cases of ai.onnx::GridSample, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include <cmath>

#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gridsample) {
  add({"GridSample", {}, {T({2, 3, 5, 6}), T({2, 4, 7, 2}, -1.2, 1.2)}, kF, 10});
  add({"GridSample",
       A({{"mode", std::string("nearest")},
          {"padding_mode", std::string("border")},
          {"align_corners", int64_t{1}}}),
       {T({2, 3, 5, 6}), T({2, 4, 7, 2}, -1.2, 1.2)},
       {F32, F64},
       10});
  add({"GridSample",
       A({{"mode", std::string("cubic")}, {"padding_mode", std::string("reflection")}}),
       {T({1, 2, 5, 6}), T({1, 3, 4, 2}, -1.5, 1.5)},
       {F32, F64},
       10});
  add({"GridSample", {}, {T({1, 2, 3, 4, 5}), T({1, 2, 3, 2, 3}, -1, 1)}, {F32}, 10, false, "3-D"});
  // Coordinates no image has: NaN (the sample is NaN), +-inf, +-1e30, +-50 (outside: 0, the edge,
  // or mirrored), and points inside; every mode and padding.
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> far = {nan,   0.1,  0.2, nan, inf,  inf, -inf, 0.3,  1e30, 1e30,
                                   -1e30, -0.4, 50,  -50, -7.3, 0.9, 0.25, -0.6, 0.8,  0.05};
  for (const char* mode : {"linear", "nearest", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      add({"GridSample",
           A({{"mode", std::string(mode)}, {"padding_mode", std::string(pad)}}),
           {T({1, 2, 5, 6}), V(TT, {1, 2, 5, 2}, far)},
           {F32, F64},
           10,
           false,
           std::string("far and non-finite coordinates, ") + mode + " " + pad});
}

}  // namespace opforge::test::cases
