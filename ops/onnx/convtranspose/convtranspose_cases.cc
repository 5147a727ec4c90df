// The GPU test cases of ai.onnx::ConvTranspose, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(convtranspose) {
  add({"ConvTranspose",
       A({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 6, 5, 4}), T({6, 3, 3, 3}), T({3})},
       kF,
       20});
  add({"ConvTranspose",
       A({{"strides", ints({2, 1})}, {"output_padding", ints({1, 0})}, {"group", int64_t{2}}}),
       {T({1, 4, 3, 5}), T({4, 2, 2, 3})},
       {F32, F16},
       20,
       false,
       "groups, output_padding"});
  add({"ConvTranspose",
       A({{"pads", ints({0, 1, 1, 0})}}),
       {T({1, 2, 4, 4}), T({2, 3, 3, 3})},
       {F32},
       20,
       false,
       "asymmetric"});
}

}  // namespace opforge::test::cases
