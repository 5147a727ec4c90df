// The GPU test cases of ai.onnx::TensorScatter, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// The write indices are explicit and valid for their mode (bad ones: tensorscatter_test.cc); in
// circular mode they wrap past max_sequence_length.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(tensorscatter) {
  std::vector<DataType> all = kAll;
  all.push_back(DataType::kFloat8E4M3);
  // Linear, the default axis -2: batch 0 writes rows 0-2, batch 1 rows 5-7 (the last ones).
  add({"TensorScatter", {}, {T({2, 3, 8, 5}), T({2, 3, 3, 5}), V(I64, {2}, {0, 5})}, all, 1, true});
  // No write_indices: rows from 0.
  add({"TensorScatter", {}, {T({3, 10, 4}), T({3, 4, 4}), None()}, kAll, 1, true});
  // Circular: 4 rows from 4 and from 9 % 6 = 3 on a cache of 6 wrap around.
  add({"TensorScatter",
       A({{"mode", std::string("circular")}}),
       {T({2, 2, 6, 7}), T({2, 2, 4, 7}), V(I64, {2}, {4, 9})},
       all,
       1,
       true});
  // The last axis (one element per row), linear.
  add({"TensorScatter",
       A({{"axis", int64_t{-1}}}),
       {T({2, 3, 9}), T({2, 3, 2}), V(I64, {2}, {7, 0})},
       kAll,
       1,
       true});
  // Decode step on axis 1 of [batch, seq, heads, dim] (16-byte rows for 16-bit types).
  add({"TensorScatter",
       A({{"axis", int64_t{1}}}),
       {T({4, 16, 2, 8}), T({4, 1, 2, 8}), V(I64, {4}, {0, 15, 7, 3})},
       kAll,
       1,
       true});
  // The whole cache rewritten, circular from 3; and a sequence_length of 0 (only the copy).
  add({"TensorScatter",
       A({{"mode", std::string("circular")}, {"axis", int64_t{1}}}),
       {T({1, 5, 3}), T({1, 5, 3}), V(I64, {1}, {3})},
       {F32, F16, I64, U8},
       1,
       true});
  add({"TensorScatter",
       A({{"axis", int64_t{1}}}),
       {T({2, 4, 3}), T({2, 0, 3}), V(I64, {2}, {4, 1})},
       {F32, I8},
       1,
       true});
}

}  // namespace opforge::test::cases
