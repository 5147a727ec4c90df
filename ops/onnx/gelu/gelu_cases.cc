// The GPU test cases of ai.onnx::Gelu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gelu) {
  add({"Gelu", {}, {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"Gelu", A({{"approximate", std::string("tanh")}}), {T({4, 33}, -4, 4)}, kF, 1, true});
}

}  // namespace opforge::test::cases
