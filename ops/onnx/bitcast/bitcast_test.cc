// ai.onnx::BitCast on the CPU: bit patterns kept exactly (hand-checked), the shape unchanged; a
// `to` of another bit width, or of a type opforge does not store, named with the node, the op and
// both types.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kBc = "ai.onnx::BitCast";

Attrs to(DataType t) {
  return {{"to", int64_t{static_cast<int64_t>(t)}}};
}
Attrs to(int64_t t) {
  return {{"to", t}};
}

template <typename T>
TensorValue raw(DataType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  TensorValue x;
  x.desc = TensorDesc{t, std::move(dims)};
  x.data.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(x.data.data(), v.data(), x.data.size());
  return x;
}

}  // namespace

TEST(BitCast, KeepsTheBitsExactly) {
  // FP32 [1, -2, 0.5] as INT32, shape kept.
  auto r = runKernel(*Registry::global(), kBc, to(DataType::kInt32),
                     {fromFloats({1, 3}, {1.f, -2.f, 0.5f})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->outputs[0].desc, (TensorDesc{DataType::kInt32, {1, 3}}));
  EXPECT_EQ(toDoubles(r->outputs[0]),
            (std::vector<double>{0x3f800000, static_cast<int32_t>(0xc0000000u), 0x3f000000}));
  // INT64 bits of 1.5 and -0.0 as FP64; a scalar.
  r = runKernel(*Registry::global(), kBc, to(DataType::kFloat64),
                {fromInt64s({2}, {0x3ff8000000000000, INT64_MIN})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const std::vector<double> d = toDoubles(r->outputs[0]);
  EXPECT_EQ(d[0], 1.5);
  EXPECT_TRUE(d[1] == 0.0 && std::signbit(d[1]));
  r = runKernel(*Registry::global(), kBc, to(DataType::kUInt32), {fromFloats({}, {-1.f})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->outputs[0].desc.dims, std::vector<int64_t>{});
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{0xbf800000u}));
  // FP16 1.0 (0x3c00) as BF16 is 0x3c00's bfloat16 value, 2^-7; BOOL as UINT8; UINT8 as FP8 E4M3
  // (0x38 = 1.0).
  r = runKernel(*Registry::global(), kBc, to(DataType::kBFloat16),
                {raw<uint16_t>(DataType::kFloat16, {1}, {0x3c00})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{0.0078125}));
  r = runKernel(*Registry::global(), kBc, to(DataType::kUInt8),
                {raw<uint8_t>(DataType::kBool, {3}, {1, 0, 1})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1, 0, 1}));
  r = runKernel(*Registry::global(), kBc, to(DataType::kFloat8E4M3),
                {raw<uint8_t>(DataType::kUInt8, {2}, {0x38, 0xb8})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1.0, -1.0}));
  // The engine path agrees with the reference.
  checkOp(Registry::global(), kBc, to(DataType::kUInt16),
          {raw<int16_t>(DataType::kInt16, {2, 2}, {-1, 0, 1, -32768})});
}

TEST(BitCast, BadTypesAreNamed) {
  NetworkDefinition net(Registry::global());
  auto f32 = *net.addInput("f32", DataType::kFloat32, {2, 3});
  auto b = *net.addInput("b", DataType::kBool, {4});
  auto op = [&](TensorRef in, const Attrs& a) {
    return net.addOp(kBc, {in}, a, "bc_node").status();
  };
  expectError(op(f32, to(DataType::kFloat16)),
              {"bc_node", "ai.onnx::BitCast", "input 'input' has type FP32 (32 bits)",
               "attribute 'to' = 10 is FP16 (16 bits)", "same bit width"});
  expectError(op(b, to(DataType::kInt16)), {"bc_node", "BOOL (8 bits)", "INT16 (16 bits)"});
  expectError(op(f32, to(int64_t{22})),
              {"attribute 'to' = 22 (INT4) is not a data type opforge supports"});
  expectError(op(f32, to(int64_t{8})), {"attribute 'to' = 8 (STRING) is not a data type"});
  expectError(op(f32, to(int64_t{14})), {"'to' = 14 (COMPLEX64)"});
  expectError(op(f32, to(int64_t{0})), {"'to' = 0"});
  expectError(op(f32, to(int64_t{99})), {"'to' = 99 (not an ONNX data type)"});
  EXPECT_TRUE(op(f32, to(DataType::kUInt32)).isOk());
  EXPECT_TRUE(op(b, to(DataType::kInt8)).isOk());
}

TEST(BitCast, EveryTacticMatchesTheReference) {
  // The CPU reference, and on a machine with a GPU the CUDA copy, each through the engine.
  std::mt19937_64 rng(26);
  for (auto [a, b] :
       std::vector<std::pair<DataType, DataType>>{{DataType::kFloat32, DataType::kInt32},
                                                  {DataType::kUInt16, DataType::kFloat16},
                                                  {DataType::kFloat64, DataType::kUInt64},
                                                  {DataType::kInt8, DataType::kUInt8}}) {
    auto r =
        checkOpTactics(Registry::global(), kBc, to(b), {randomTensor(a, {3, 5, 7}, rng, -50, 50)});
    EXPECT_EQ(r.checked.size(), r.gpu ? 2u : 1u);
  }
}
