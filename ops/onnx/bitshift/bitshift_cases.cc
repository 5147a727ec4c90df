// The GPU test cases of ai.onnx::BitShift, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(bitshift) {
  add({"BitShift",
       A({{"direction", std::string("LEFT")}}),
       {T({3, 33}, 1, 100), T({3, 33}, 1, 7)},
       {U8, U16, U32, U64}});
  add({"BitShift",
       A({{"direction", std::string("RIGHT")}}),
       {T({3, 33}, 1, 100), T({33}, 1, 9)},
       {U8, U32}});
  // Signed (opset 28): arithmetic right shifts of negative values, left shifts past the sign bit,
  // and amounts out of [0, width).
  add({"BitShift",
       A({{"direction", std::string("RIGHT")}}),
       {T({3, 33}, -100, 100), T({33}, -3, 70)},
       {I8, I16, I32, I64}});
  add({"BitShift",
       A({{"direction", std::string("LEFT")}}),
       {T({3, 33}, -100, 100), T({3, 33}, -3, 70)},
       {I8, I32, I64}});
}

}  // namespace opforge::test::cases
