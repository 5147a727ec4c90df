// The GPU test cases of ai.onnx::ConstantOfShape, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include <cstring>

#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(constantofshape) {
  add({"ConstantOfShape", {}, {Vi({3, 4})}, {I64}});
  TensorValue v;
  v.desc = TensorDesc{DataType::kInt32, {1}};
  v.data.resize(4);
  const int32_t seven = 7;
  std::memcpy(v.data.data(), &seven, 4);
  add({"ConstantOfShape", A({{"value", v}}), {Vi({2, 3, 5})}, {I64}});
}

}  // namespace opforge::test::cases
