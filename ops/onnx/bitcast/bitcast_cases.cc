// The GPU test cases of ai.onnx::BitCast, run by opforge_gpu_onnx_tests (tests/op_cases.h): every
// pair of types of one width opforge stores, both ways. Integers read as floats are drawn from
// ranges whose bits are floats in [1, 2) (so no NaN hides an element left unwritten); floats read
// as integers are any values. Each case runs also with unaligned tensors.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(bitcast) {
  constexpr DataType E4M3 = DataType::kFloat8E4M3, E5M2 = DataType::kFloat8E5M2;
  // A [dims] input of the case's type: integers whose bits read as `as` (a float type of their
  // width) are in [1, 2); any other input random in [-100, 100] (unsigned: [0, 100]).
  const auto bitsInput = [](std::vector<int64_t> dims, DataType as) {
    switch (as) {
      case F16:
        return T(std::move(dims), 0x3c00, 0x3fff);
      case B16:
        return T(std::move(dims), 0x3f80, 0x3fff);
      case F32:
        return T(std::move(dims), 0x3f800000, 0x3fffffff);
      case F64:
        // Multiples of 2^10 (doubles hold them exactly) in the bits of [1, 2).
        return T(std::move(dims), 4607182418800017408.0, 4611686018427387904.0 - 4096);
      default:
        return T(std::move(dims), -100, 100);
    }
  };
  const std::vector<std::vector<DataType>> widths = {
      {U8, I8, BOOL, E4M3, E5M2}, {U16, I16, F16, B16}, {U32, I32, F32}, {U64, I64, F64}};
  const std::vector<std::vector<int64_t>> shapes = {{4, 33}, {7}, {2, 3, 5}};
  int k = 0;
  for (const auto& group : widths)
    for (DataType from : group)
      for (DataType to : group) {
        if (from == to) continue;
        // BOOL holds 0 and 1 only; the float8 types take any byte.
        if (to == BOOL && from != U8 && from != I8) continue;
        In x = bitsInput(shapes[k++ % shapes.size()], to);
        if (to == BOOL) x = T(x.dims, 0, 1, 0);
        if (from == BOOL || from == E4M3 || from == E5M2) x = T(x.dims, -2, 2);
        add({"BitCast", A({{"to", int64_t{static_cast<int64_t>(to)}}}), {x}, {from}, 1, true});
      }
  // A scalar and an empty tensor.
  add({"BitCast", A({{"to", int64_t{static_cast<int64_t>(I32)}}}), {T({})}, {F32}, 1, true});
  add({"BitCast", A({{"to", int64_t{static_cast<int64_t>(U16)}}}), {T({3, 0})}, {F16}});
}

}  // namespace opforge::test::cases
