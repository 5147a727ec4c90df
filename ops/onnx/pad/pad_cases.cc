// The GPU test cases of ai.onnx::Pad, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(pad) {
  add({"Pad", {}, {T({3, 4, 5}), Vi({1, 0, 2, 2, 1, 0}), V(TT, {}, {7})}, kFI});
  add({"Pad",
       A({{"mode", std::string("reflect")}}),
       {T({3, 4, 5}), Vi({0, 2, 3, 0, 1, 3})},
       {F32, F16, I64}});
  add({"Pad",
       A({{"mode", std::string("edge")}}),
       {T({3, 4, 5}), Vi({2, 0}), None(), Vi({-1})},
       {F32, U8}});
  add({"Pad",
       A({{"mode", std::string("wrap")}}),
       {T({3, 4, 5}), Vi({1, 1, -1, 2, 0, 1})},
       {F32, F64},
       1,
       false,
       "wrap, negative pads crop"});
  add({"Pad",
       A({{"pads", ints({0, 1, 0, 2})}, {"value", 1.5}}),
       {T({3, 4})},
       {F32},
       1,
       false,
       "opset < 11"});
}

}  // namespace opforge::test::cases
