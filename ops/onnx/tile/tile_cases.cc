// The GPU test cases of ai.onnx::Tile, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(tile) {
  add({"Tile", {}, {T({2, 3, 4}), Vi({2, 1, 3})}, kAll});
}

}  // namespace opforge::test::cases
