// The GPU test cases of ai.onnx::LpPool, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(lppool) {
  add({"LpPool",
       A({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 3, 9, 8})},
       kF,
       10});
  add({"LpPool",
       A({{"kernel_shape", ints({2, 3})},
          {"p", int64_t{3}},
          {"dilations", ints({2, 1})},
          {"ceil_mode", int64_t{1}},
          {"strides", ints({2, 2})}}),
       {T({2, 3, 9, 8})},
       {F32, F64},
       10,
       false,
       "p = 3, dilations, ceil_mode"});
  add({"LpPool",
       A({{"kernel_shape", ints({4})}, {"p", int64_t{1}}, {"auto_pad", std::string("SAME_UPPER")}}),
       {T({3, 2, 17})},
       kF,
       10,
       false,
       "1-D, p = 1, SAME_UPPER"});
}

}  // namespace opforge::test::cases
