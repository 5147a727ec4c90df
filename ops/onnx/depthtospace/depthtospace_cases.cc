// The GPU test cases of ai.onnx::DepthToSpace, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(depthtospace) {
  add({"DepthToSpace", A({{"blocksize", int64_t{2}}}), {T({2, 8, 3, 5})}, {F32, F16, I64}});
  add({"DepthToSpace",
       A({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}),
       {T({2, 8, 3, 5})},
       {F32, U8}});
}

}  // namespace opforge::test::cases
