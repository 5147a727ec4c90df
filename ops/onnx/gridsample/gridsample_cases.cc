// The GPU test cases of ai.onnx::GridSample, run by opforge_gpu_onnx_tests (tests/op_cases.h).
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
}

}  // namespace opforge::test::cases
