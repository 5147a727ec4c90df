// The GPU test cases of ai.onnx::Constant, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include <cstring>

#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(constant) {
  TensorValue v;
  v.desc = TensorDesc{DataType::kFloat32, {2, 3}};
  v.data.resize(24);
  const float f[6] = {1.5f, -2.f, 3.25f, 4.f, -5.5f, 6.f};
  std::memcpy(v.data.data(), f, 24);
  add({"Constant", A({{"value", v}}), {}, {F32}});
}

}  // namespace opforge::test::cases
