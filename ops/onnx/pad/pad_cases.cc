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
  // The attribute form (pad_constant_params makes it of known pads): the block path.
  add({"Pad",
       A({{"pads", ints({0, 1, 2, 0, 0, 3, 1, 0})}}),
       {T({2, 7, 9, 48})},
       kAll,
       1,
       true,
       "[N, H, W, C] padded on H and W: C in 16-byte units"});
  add({"Pad",
       A({{"pads", ints({1, 0, 2, 0, 2, 3})}, {"value", -2.5}}),
       {T({3, 5, 6})},
       {F32, F16, F64, I8},
       1,
       true,
       "the last axis padded: one element a unit"});
  add({"Pad",
       A({{"mode", std::string("reflect")}, {"pads", ints({0, 2, -1, 0, 1, 0})}}),
       {T({2, 4, 10})},
       {F32, B16},
       1,
       false,
       "reflect and a crop, block of 10"});
  add({"Pad",
       A({{"mode", std::string("edge")}, {"pads", ints({1, 0, 0, 0, 2, 0, 0, 0})}}),
       {T({2, 3, 4, 5})},
       {I64, BOOL, U8},
       1,
       false,
       "edge on the outer axis"});
  add({"Pad",
       A({{"mode", std::string("wrap")}, {"pads", ints({0, 3, 0, 0, 1, 0})}}),
       {T({2, 5, 8}), None(), V(TT, {}, {0})},
       {F16, F32},
       1,
       false,
       "wrap; a constant_value input the mode ignores"});
  add({"Pad",
       A({{"pads", ints({0, 2, 0, 1})}}),
       {T({0, 4}), None(), V(TT, {}, {3})},
       {F32, I32},
       1,
       false,
       "an empty input padded into a non-empty output: the device fill"});
}

}  // namespace opforge::test::cases
