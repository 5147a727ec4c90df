// opforge_gpu_onnx_tests (label gpu): every built-in op (ops/onnx, the fused ops of ops/core),
// every CUDA tactic and every data type it runs, on fresh random inputs (never zeros; seed printed,
// or OPFORGE_TEST_SEED), against the CPU reference (tactic 0). Each (case, type, tactic) runs three
// times: outputs and workspace poisoned with 0xff (NaN for floats); poisoned with 0x00 inside a
// CUDA graph capture (so the tactic is capture-safe and writes every element); and, for the
// elementwise and data-movement ops, with every tensor offset by one element (no 16-byte
// alignment: the scalar paths). Then: coverage (every op with CUDA tactics has a case, every CUDA
// tactic ran), run-time index errors through the device error records, and a few engine-level
// builds (fusions, --fp16 lowering, CPU vs CUDA plans).
//
// Tolerances, |got - want| <= atol + rtol * |want| (+ 1 ulp for FP16); NaN passes only against
// NaN, infinities only against the same infinity; integers and BOOL exact:
//   FP64 1e-11 / 1e-11   FP32 1e-5 / 1e-5   FP16 1e-3 / 1e-3   BF16 1e-2 / 1e-2
// multiplied by the case's factor for ops that accumulate in a different order or precision than
// the reference (which accumulates in double): reductions, normalizations, softmax, pooling x10;
// MatMul/Gemm/Conv and their fused forms x20 (cuBLASLt/cuDNN accumulate FP32/FP16/BF16 in FP32);
// the atomic scatter reductions x10. The reference runs first on the host; a case whose reference
// itself fails is a test error, not a skip.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "gpu_runner.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

#define SKIP_WITHOUT_GPU()                                \
  do {                                                    \
    std::string why;                                      \
    if (!gpu::deviceAvailable(&why)) GTEST_SKIP() << why; \
  } while (0)

// ---------------------------------------------------------------------------------------------
// Case description
// ---------------------------------------------------------------------------------------------

constexpr DataType F32 = DataType::kFloat32, F16 = DataType::kFloat16, B16 = DataType::kBFloat16,
                   F64 = DataType::kFloat64, I8 = DataType::kInt8, I16 = DataType::kInt16,
                   I32 = DataType::kInt32, I64 = DataType::kInt64, U8 = DataType::kUInt8,
                   U16 = DataType::kUInt16, U32 = DataType::kUInt32, U64 = DataType::kUInt64,
                   BOOL = DataType::kBool, TT = DataType::kUndefined;

const std::vector<DataType> kF{F32, F16, B16, F64};
const std::vector<DataType> kFI{F32, F16, B16, F64, I32, I64, I8, U8};
const std::vector<DataType> kInts{I32, I64, I8, U8, I16, U16, U32, U64};
const std::vector<DataType> kAll{F32, F16, B16, F64, I32, I64, I8, U8, I16, U16, U32, U64, BOOL};

// One input: of the case's type (dt == TT) or a fixed type; random in [lo, hi] (never zero, never
// within `gap` of zero), explicit values, a permutation (unique indices), or absent.
struct In {
  enum Kind { kRandom, kValues, kAbsent, kUnique } kind = kRandom;
  DataType dt = TT;
  std::vector<int64_t> dims;
  double lo = -2, hi = 2, gap = 0.05;
  std::vector<double> vals;
  int64_t n = 0;  // kUnique: values are distinct in [0, n)
};
In T(std::vector<int64_t> d, double lo = -2, double hi = 2, double gap = 0.05) {
  In i;
  i.dims = std::move(d);
  i.lo = lo, i.hi = hi, i.gap = gap;
  return i;
}
In R(DataType dt, std::vector<int64_t> d, double lo, double hi) {
  In i = T(std::move(d), lo, hi, 0);
  i.dt = dt;
  return i;
}
In V(DataType dt, std::vector<int64_t> d, std::vector<double> v) {
  In i;
  i.kind = In::kValues;
  i.dt = dt;
  i.dims = std::move(d);
  i.vals = std::move(v);
  return i;
}
In Vi(std::vector<int64_t> v) {  // a 1-D INT64 constant
  std::vector<double> d(v.begin(), v.end());
  return V(I64, {static_cast<int64_t>(v.size())}, d);
}
In U(DataType dt, std::vector<int64_t> d, int64_t n) {
  In i;
  i.kind = In::kUnique;
  i.dt = dt;
  i.dims = std::move(d);
  i.n = n;
  return i;
}
In None() {
  In i;
  i.kind = In::kAbsent;
  return i;
}

struct Case {
  std::string op;
  Attrs attrs;
  std::vector<In> in;
  std::vector<DataType> types;
  double tol = 1;
  bool misalign = false;  // also run with unaligned tensors
  std::string note = {};
};

Attrs A(std::initializer_list<std::pair<const std::string, AttrValue>> l) {
  return Attrs(l);
}
std::vector<int64_t> ints(std::initializer_list<int64_t> l) {
  return std::vector<int64_t>(l);
}

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

std::vector<Case> allCases() {
  std::vector<Case> c;
  auto add = [&](Case x) { c.push_back(std::move(x)); };
  // Unary float ops: a contiguous shape with a tail (vector width does not divide it).
  struct Un {
    const char* op;
    double lo, hi;
  };
  for (Un u : {Un{"Acos", -0.95, 0.95}, Un{"Acosh", 1.05, 6},    Un{"Asin", -0.95, 0.95},
               Un{"Asinh", -4, 4},      Un{"Atan", -4, 4},       Un{"Atanh", -0.95, 0.95},
               Un{"Ceil", -8, 8},       Un{"Cos", -4, 4},        Un{"Cosh", -4, 4},
               Un{"Erf", -3, 3},        Un{"Exp", -6, 6},        Un{"Floor", -8, 8},
               Un{"Log", 0.05, 9},      Un{"Reciprocal", -4, 4}, Un{"Round", -8, 8},
               Un{"Sigmoid", -9, 9},    Un{"Sin", -4, 4},        Un{"Sinh", -4, 4},
               Un{"Softplus", -9, 9},   Un{"Softsign", -9, 9},   Un{"Sqrt", 0.05, 9},
               Un{"Tan", -1.3, 1.3},    Un{"Tanh", -4, 4},       Un{"Mish", -6, 6},
               Un{"HardSwish", -5, 5},  Un{"Log", -2, 2} /* NaN for x < 0: NaN must match NaN */})
    add({u.op, {}, {T({3, 7, 33}, u.lo, u.hi)}, kF, 1, true});
  add({"Abs", {}, {T({5, 67}, -9, 9)}, {F32, F16, B16, F64, I32, I64, I8, U8, I16, U64}, 1, true});
  add({"Neg", {}, {T({5, 67}, -9, 9)}, {F32, F16, B16, F64, I32, I64, I8, I16}, 1, true});
  add({"Relu", {}, {T({5, 67}, -9, 9)}, {F32, F16, B16, F64, I32, I64, I8}, 1, true});
  add({"Sign", {}, {T({5, 67}, -9, 9)}, kFI, 1, true});
  add({"Not", {}, {T({5, 67})}, {BOOL}, 1, true});
  add({"BitwiseNot", {}, {T({5, 67}, -100, 100)}, {I32, I64, I8, U8, U16}, 1, true});
  add({"IsNaN", {}, {T({4, 33})}, kF, 1, true});
  add({"IsInf",
       A({{"detect_negative", int64_t{1}}, {"detect_positive", int64_t{0}}}),
       {T({4, 33})},
       kF,
       1,
       true});
  add({"Elu", A({{"alpha", 0.7}}), {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"LeakyRelu", A({{"alpha", 0.1}}), {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"ThresholdedRelu", A({{"alpha", 0.5}}), {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"Celu", A({{"alpha", 1.5}}), {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"Selu", {}, {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"HardSigmoid", A({{"alpha", 0.3}, {"beta", 0.4}}), {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"Gelu", {}, {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"Gelu", A({{"approximate", std::string("tanh")}}), {T({4, 33}, -4, 4)}, kF, 1, true});
  add({"Swish", A({{"alpha", 1.3}}), {T({4, 33}, -6, 6)}, kF, 1, true});
  add({"Shrink",
       A({{"bias", 0.5}, {"lambd", 1.0}}),
       {T({4, 33}, -4, 4)},
       {F32, F16, B16, F64, I32, I8},
       1,
       true});
  add({"Clip",
       {},
       {T({4, 33}, -4, 4), V(TT, {}, {-1.5}), V(TT, {}, {2.5})},
       {F32, F16, B16, F64, I32, I64, I8},
       1,
       true});
  add({"Clip", {}, {T({4, 33}, -4, 4), None(), V(TT, {}, {1.0})}, kF});
  add({"Clip", A({{"min", -0.5}}), {T({4, 33}, -4, 4)}, kF, 1, false, "opset < 11 attributes"});
  // Binary ops: same shapes (vector path), a scalar, and numpy broadcasting.
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    const double gap = std::string(op) == "Div" ? 0.5 : 0.05;
    add({op, {}, {T({3, 5, 33}), T({3, 5, 33}, -2, 2, gap)}, kFI, 1, true});
    add({op, {}, {T({3, 5, 33}), T({}, 0.5, 2, gap)}, kFI, 1, true});
    add({op, {}, {T({4, 1, 6}), T({3, 1}, -2, 2, gap)}, kFI});
    add({op, {}, {T({2, 3, 4, 5}), T({3, 1, 5}, -2, 2, gap)}, {F32, F16, I64}});
  }
  add({"Div",
       {},
       {T({4, 17}, -50, 50), T({4, 17}, -9, 9, 1)},
       {I32, I64, I8, U8},
       1,
       false,
       "integer division"});
  add({"Mod", {}, {T({4, 17}, -50, 50), T({4, 17}, -9, 9, 1)}, {I32, I64, I8, U8}});
  add({"Mod",
       A({{"fmod", int64_t{1}}}),
       {T({4, 17}, -50, 50), T({4, 17}, -9, 9, 1)},
       {F32, F16, F64, I32, I64}});
  add({"Pow", {}, {T({4, 17}, 0.2, 3), T({4, 17}, -2, 2)}, kF});
  add({"Pow", {}, {T({4, 17}, 0.2, 3), R(I64, {1}, 2, 3)}, kF, 1, false, "integer exponent"});
  add({"Pow", {}, {T({4, 17}, -5, 5), R(I32, {4, 17}, 0, 3)}, {I32, I64}});
  add({"PRelu", {}, {T({2, 3, 9}), T({3, 1}, 0.1, 0.9)}, {F32, F16, B16, F64, I32}});
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    add({op, {}, {T({3, 33}, -100, 100), T({3, 33}, -100, 100)}, {I32, I64, I8, U8, U16}, 1, true});
  add({"BitShift",
       A({{"direction", std::string("LEFT")}}),
       {T({3, 33}, 1, 100), T({3, 33}, 1, 7)},
       {U8, U16, U32, U64}});
  add({"BitShift",
       A({{"direction", std::string("RIGHT")}}),
       {T({3, 33}, 1, 100), T({33}, 1, 9)},
       {U8, U32}});
  for (const char* op : {"And", "Or", "Xor"})
    add({op, {}, {T({3, 33}), T({1, 33})}, {BOOL}, 1, true});
  for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"})
    add({op,
         {},
         {T({3, 33}, -3, 3), T({3, 33}, -3, 3)},
         {F32, F16, F64, I32, I64, I8, U8},
         1,
         true});
  add({"Equal", {}, {T({3, 33}), T({33})}, {BOOL, I32}});
  for (const char* op : {"Max", "Min", "Sum"}) {
    add({op, {}, {T({3, 17}), T({3, 17}), T({17})}, kFI});
    add({op, {}, {T({3, 17})}, {F32, I32}, 1, false, "one input"});
  }
  add({"Mean", {}, {T({2, 3, 5}), T({3, 1}), T({2, 3, 5})}, kF});
  std::vector<In> many;
  for (int i = 0; i < 11; ++i) many.push_back(T({2, 9}));
  add({"Sum", {}, many, {F32, F16, I32}, 1, false, "more inputs than one pass takes"});
  add({"Where", {}, {R(BOOL, {3, 1, 7}, 0, 1), T({3, 4, 7}), T({7})}, kAll});
  add({"Where", {}, {R(BOOL, {3, 33}, 0, 1), T({3, 33}), T({3, 33})}, {F32, I64}});
  for (DataType to : {F32, F16, B16, F64, I32, I64, I8, U8, BOOL})
    add({"Cast",
         A({{"to", int64_t{static_cast<int64_t>(to)}}}),
         {T({4, 33}, -300, 300)},
         kAll,
         1,
         true});
  add({"CastLike", {}, {T({4, 33}, -300, 300), R(F16, {1}, 1, 1)}, kAll});
  add({"Identity", {}, {T({4, 33})}, kAll});
  add({"Dropout", {}, {T({4, 33})}, kF});
  // Data movement.
  add({"Transpose",
       A({{"perm", ints({0, 2, 1})}}),
       {T({3, 37, 45})},
       {F32, F16, F64, I8, BOOL},
       1,
       true});
  add({"Transpose",
       A({{"perm", ints({2, 0, 1, 3})}}),
       {T({3, 4, 5, 8})},
       {F32, F16, I64},
       1,
       true});
  add({"Transpose", {}, {T({2, 3, 4, 5})}, {F32, U8}});
  add({"Transpose", A({{"perm", ints({1, 0, 2})}}), {T({2, 1, 7})}, {F32}});
  add({"Reshape", {}, {T({3, 4, 5}), Vi({6, -1})}, kAll});
  add({"Reshape", {}, {T({3, 4, 5}), Vi({0, 0, 5})}, {F32}});
  add({"Flatten", A({{"axis", int64_t{2}}}), {T({3, 4, 5})}, kAll});
  add({"Squeeze", {}, {T({3, 1, 5}), Vi({1})}, kAll});
  add({"Unsqueeze", {}, {T({3, 5}), Vi({0, -1})}, kAll});
  add({"Concat",
       A({{"axis", int64_t{1}}}),
       {T({2, 3, 5}), T({2, 1, 5}), T({2, 4, 5})},
       kAll,
       1,
       true});
  add({"Concat", A({{"axis", int64_t{-1}}}), {T({2, 8}), T({2, 8})}, {F32, F16, I64}, 1, true});
  {
    std::vector<In> parts;
    for (int i = 0; i < 18; ++i) parts.push_back(T({2, 1 + i % 3}));
    add({"Concat", A({{"axis", int64_t{1}}}), parts, {F32, I8}, 1, false, "more than 16 inputs"});
  }
  add({"Split",
       A({{"axis", int64_t{1}}, {"_onnx_num_outputs", int64_t{3}}}),
       {T({2, 9, 4})},
       kAll,
       1,
       true});
  add({"Split", A({{"axis", int64_t{0}}}), {T({7, 3}), Vi({2, 5})}, {F32, I64}});
  add({"Slice", {}, {T({5, 6, 7}), Vi({1, -5}), Vi({4, 100}), Vi({0, 2}), Vi({1, 2})}, kAll});
  add({"Slice",
       {},
       {T({5, 6, 7}), Vi({4, -1}), Vi({0, -100}), Vi({0, 1}), Vi({-2, -1})},
       {F32, F16, I64},
       1,
       false,
       "negative steps"});
  add({"Slice", {}, {T({5, 6}), V(I32, {1}, {1}), V(I32, {1}, {4})}, {F32}});
  add({"Slice",
       A({{"starts", ints({1})}, {"ends", ints({3})}, {"axes", ints({1})}}),
       {T({4, 6})},
       {F32, U8},
       1,
       false,
       "opset < 10 attributes"});
  add({"Expand", {}, {T({3, 1, 5}), Vi({2, 3, 4, 5})}, kAll, 1, true});
  add({"Tile", {}, {T({2, 3, 4}), Vi({2, 1, 3})}, kAll});
  add({"DepthToSpace", A({{"blocksize", int64_t{2}}}), {T({2, 8, 3, 5})}, {F32, F16, I64}});
  add({"DepthToSpace",
       A({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}),
       {T({2, 8, 3, 5})},
       {F32, U8}});
  add({"SpaceToDepth", A({{"blocksize", int64_t{2}}}), {T({2, 3, 6, 4})}, {F32, F16, I32}});
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
  add({"Trilu", {}, {T({2, 5, 6})}, {F32, F16, I64, BOOL}});
  add({"Trilu", A({{"upper", int64_t{0}}}), {T({2, 5, 6}), V(I64, {}, {-1})}, {F32, I8}});
  add({"OneHot",
       {},
       {R(I64, {2, 5}, -6, 5), V(I64, {}, {6}), V(TT, {2}, {2, 9})},
       {F32, I32, I64, F16}});
  add({"OneHot",
       A({{"axis", int64_t{0}}}),
       {R(F32, {4}, -3, 3), V(F32, {}, {3}), V(TT, {2}, {0, 1})},
       {F32, BOOL}});
  add({"EyeLike", A({{"k", int64_t{1}}}), {T({4, 6})}, kAll});
  add({"EyeLike", A({{"dtype", int64_t{1}}}), {T({5, 3})}, {I64}});
  add({"Range", {}, {V(TT, {}, {2}), V(TT, {}, {31}), V(TT, {}, {3})}, {F32, F64, I32, I64, I16}});
  add({"Range", {}, {V(TT, {}, {1}), V(TT, {}, {-2}), V(TT, {}, {-0.25})}, {F32, F64}});
  add({"ConstantOfShape", {}, {Vi({3, 4})}, {I64}});
  {
    TensorValue v;
    v.desc = TensorDesc{DataType::kInt32, {1}};
    v.data.resize(4);
    const int32_t seven = 7;
    std::memcpy(v.data.data(), &seven, 4);
    add({"ConstantOfShape", A({{"value", v}}), {Vi({2, 3, 5})}, {I64}});
  }
  add({"Shape", {}, {T({3, 4, 5})}, {F32, BOOL}});
  add({"Shape", A({{"start", int64_t{1}}, {"end", int64_t{-1}}}), {T({3, 4, 5, 6})}, {F16}});
  add({"Size", {}, {T({3, 4, 5})}, {F32, I8}});
  {
    TensorValue v;
    v.desc = TensorDesc{DataType::kFloat32, {2, 3}};
    v.data.resize(24);
    const float f[6] = {1.5f, -2.f, 3.25f, 4.f, -5.5f, 6.f};
    std::memcpy(v.data.data(), f, 24);
    add({"Constant", A({{"value", v}}), {}, {F32}});
  }
  // Indexing (valid indices, negative ones included).
  add({"Gather", A({{"axis", int64_t{1}}}), {T({3, 7, 5}), R(I64, {2, 4}, -7, 6)}, kAll, 1, true});
  add({"Gather", {}, {T({9, 16}), R(I32, {5}, -9, 8)}, {F32, F16, I64}, 1, true});
  add({"GatherElements",
       A({{"axis", int64_t{1}}}),
       {T({3, 5, 4}), R(I64, {3, 2, 4}, -5, 4)},
       kAll});
  add({"GatherElements", {}, {T({4, 3}), R(I32, {2, 2}, -4, 3)}, {F32, I64}});
  add({"GatherND", {}, {T({4, 5, 6}), R(I64, {3, 2}, -4, 3)}, kAll});
  add({"GatherND",
       A({{"batch_dims", int64_t{1}}}),
       {T({2, 5, 6}), R(I64, {2, 3, 1}, -5, 4)},
       {F32, F16, I32}});
  add({"ScatterND", {}, {T({8, 5}), U(I64, {4, 1}, 8), T({4, 5})}, kAll});
  for (const char* red : {"add", "mul", "max", "min"})
    add({"ScatterND",
         A({{"reduction", std::string(red)}}),
         {T({6, 3}), R(I64, {5, 1}, -6, 5), T({5, 3})},
         {F32, F64, I32, I64},
         10});
  add({"ScatterElements",
       A({{"axis", int64_t{1}}}),
       {T({3, 6}), U(I64, {3, 6}, 6), T({3, 6})},
       kAll});
  for (const char* red : {"add", "max"})
    add({"ScatterElements",
         A({{"axis", int64_t{0}}, {"reduction", std::string(red)}}),
         {T({4, 5}), R(I32, {6, 5}, -4, 3), T({6, 5})},
         {F32, F16, I32, U8},
         10});
  add({"NonZero", {}, {R(TT, {6, 7, 5}, -1, 1)}, {F32, I32, BOOL, F16}});
  add({"TopK", {}, {T({3, 37}), Vi({5})}, {F32, F16, F64, I32, I64, U8}});
  add({"TopK",
       A({{"axis", int64_t{0}}, {"largest", int64_t{0}}}),
       {T({40, 3, 2}), Vi({7})},
       {F32, I32}});
  add({"CumSum", {}, {T({3, 5, 9}), V(I64, {}, {1})}, kFI, 10});
  add({"CumSum",
       A({{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}),
       {T({2, 1500}), V(I32, {}, {-1})},
       {F32, F64, I64},
       10});
  add({"CumProd", {}, {T({3, 5, 9}, 0.5, 1.5), V(I64, {}, {2})}, {F32, F64, I32}, 10});
  add({"CumProd",
       A({{"reverse", int64_t{1}}}),
       {T({4, 6}, 0.5, 1.5), V(I64, {}, {0})},
       {F32, F16},
       10});
  // Reductions.
  struct Red {
    const char* op;
    std::vector<DataType> types;
    double lo, hi;
  };
  for (Red r :
       {Red{"ReduceSum", kFI, -2, 2}, Red{"ReduceMean", kFI, -2, 2},
        Red{"ReduceMax", {F32, F16, F64, I32, U8}, -2, 2},
        Red{"ReduceMin", {F32, F16, F64, I32, U8}, -2, 2},
        Red{"ReduceProd", {F32, F64, I32}, 0.8, 1.2}, Red{"ReduceL1", {F32, F16, F64, I32}, -2, 2},
        Red{"ReduceL2", {F32, F16, F64, I32}, -2, 2},
        Red{"ReduceSumSquare", {F32, F16, F64, I32}, -2, 2}, Red{"ReduceLogSum", kF, 0.1, 2},
        Red{"ReduceLogSumExp", kF, -3, 3}}) {
    add({r.op, {}, {T({4, 5, 6}, r.lo, r.hi), Vi({1})}, r.types, 10});
    add({r.op, A({{"keepdims", int64_t{0}}}), {T({4, 5, 6}, r.lo, r.hi), Vi({0, 2})}, r.types, 10});
    add({r.op, {}, {T({3, 700}, r.lo, r.hi)}, {F32}, 10, false, "all axes"});
  }
  add({"ReduceMax", {}, {T({4, 5}), Vi({-1})}, {BOOL}});
  add({"ReduceSum",
       A({{"noop_with_empty_axes", int64_t{1}}}),
       {T({4, 5}), V(I64, {0}, {})},
       {F32}});
  add({"ReduceMean",
       A({{"axes", ints({1})}, {"keepdims", int64_t{0}}}),
       {T({4, 5, 6})},
       {F32},
       10,
       false,
       "axes attribute"});
  add({"ArgMax", A({{"axis", int64_t{1}}}), {T({4, 9, 5})}, kFI});
  add({"ArgMax",
       A({{"axis", int64_t{-1}}, {"select_last_index", int64_t{1}}, {"keepdims", int64_t{0}}}),
       {T({4, 70}, -3, 3)},
       {F32, I8, F16}});
  add({"ArgMin", A({{"axis", int64_t{0}}}), {T({6, 5})}, kFI});
  add({"ArgMin",
       A({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}),
       {T({3, 40}, -3, 3)},
       {F32, I32}});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    add({op, {}, {T({3, 4, 37}, -5, 5)}, kF, 10});
    add({op, A({{"axis", int64_t{1}}}), {T({3, 40, 6}, -5, 5)}, kF, 10});
    add({op, {}, {T({2, 3000}, -5, 5)}, {F32, F16}, 10});
    add({op,
         A({{"axis", int64_t{1}}, {"_onnx_opset", int64_t{11}}}),
         {T({2, 3, 5}, -5, 5)},
         {F32},
         10,
         false,
         "opset 11 flattening"});
  }
  // Normalizations.
  add({"LayerNormalization", {}, {T({4, 3, 40}), T({40}), T({40})}, kF, 10});
  add({"LayerNormalization",
       A({{"axis", int64_t{1}}, {"_onnx_num_outputs", int64_t{3}}}),
       {T({4, 3, 40}), T({3, 1}), None()},
       kF,
       10,
       false,
       "broadcast scale, statistics outputs"});
  add({"LayerNormalization", {}, {T({2, 3000}), T({3000}), T({3000})}, {F32, F16}, 10});
  add({"RMSNormalization", {}, {T({4, 3, 40}), T({40})}, kF, 10});
  add({"RMSNormalization", A({{"axis", int64_t{1}}}), {T({4, 3, 40}), T({1, 40})}, {F32, B16}, 10});
  add({"InstanceNormalization", {}, {T({2, 3, 5, 7}), T({3}), T({3})}, kF, 10});
  add({"GroupNormalization",
       A({{"num_groups", int64_t{2}}}),
       {T({2, 4, 5, 3}), T({4}), T({4})},
       kF,
       10});
  add({"GroupNormalization",
       A({{"num_groups", int64_t{2}}}),
       {T({2, 4, 5}), T({2}), T({2})},
       {F32},
       10,
       false,
       "per-group scale (opset 18)"});
  add({"BatchNormalization",
       {},
       {T({2, 3, 5, 4}), T({3}), T({3}), T({3}), R(TT, {3}, 0.5, 2)},
       kF,
       10});
  add({"BatchNormalization",
       {},
       {T({2, 3, 5}), R(F32, {3}, 0.5, 1.5), R(F32, {3}, -1, 1), R(F32, {3}, -1, 1),
        R(F32, {3}, 0.5, 2)},
       {F16, B16},
       10,
       false,
       "FP32 statistics"});
  // Pooling.
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 3, 9, 8})},
       {F32, F16, B16, F64, I32, U8},
       10});
  add({"MaxPool",
       A({{"kernel_shape", ints({2, 3})},
          {"dilations", ints({2, 1})},
          {"ceil_mode", int64_t{1}},
          {"storage_order", int64_t{1}},
          {"_onnx_num_outputs", int64_t{2}}}),
       {T({2, 3, 9, 8})},
       {F32, F16},
       10,
       false,
       "indices, column-major"});
  add({"MaxPool",
       A({{"kernel_shape", ints({3})}, {"auto_pad", std::string("SAME_UPPER")}}),
       {T({2, 3, 10})},
       {F32},
       10});
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 3})},
          {"strides", ints({2, 2})},
          {"pads", ints({1, 1, 1, 1})},
          {"_onnx_num_outputs", int64_t{1}}}),
       {T({2, 3, 9, 8})},
       {F32, F16, B16, F64, I32, U8},
       10,
       false,
       "no indices"});
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 2})},
          {"pads", ints({1, 0, 1, 1})},
          {"dilations", ints({1, 2})},
          {"_onnx_num_outputs", int64_t{1}}}),
       {T({1, 2, 5, 300})},
       {F32, F16},
       10,
       false,
       "no indices, rows wider than a block"});
  add({"AveragePool",
       A({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 3, 9, 8})},
       kF,
       10});
  add({"AveragePool",
       A({{"kernel_shape", ints({3, 2})},
          {"pads", ints({1, 0, 1, 1})},
          {"count_include_pad", int64_t{1}},
          {"ceil_mode", int64_t{1}},
          {"strides", ints({2, 2})}}),
       {T({2, 3, 9, 8})},
       {F32, F64},
       10,
       false,
       "count_include_pad, ceil_mode"});
  add({"GlobalAveragePool", {}, {T({2, 3, 7, 9})}, kF, 10});
  add({"GlobalMaxPool", {}, {T({2, 3, 7, 9})}, kF, 10});
  // Products.
  add({"MatMul", {}, {T({3, 17, 29}), T({29, 13})}, kFI, 20});
  add({"MatMul",
       {},
       {T({2, 1, 8, 16}), T({3, 16, 8})},
       {F32, F16, B16, F64},
       20,
       false,
       "broadcast batch"});
  add({"MatMul", {}, {T({16}), T({4, 16, 3})}, {F32, I64}, 20, false, "1-D A"});
  add({"MatMul", {}, {T({5, 16}), T({16})}, {F32, F16}, 20, false, "1-D B"});
  add({"MatMul", {}, {T({64, 128}), T({128, 96})}, {F32, F16, B16}, 20});
  add({"Gemm", A({{"transB", int64_t{1}}}), {T({9, 33}), T({17, 33}), T({17})}, kFI, 20});
  add({"Gemm",
       A({{"transA", int64_t{1}}, {"alpha", 0.5}, {"beta", 2.0}}),
       {T({33, 9}), T({33, 17}), T({9, 1})},
       {F32, F16, F64, I32},
       20,
       false,
       "transA, broadcast C"});
  add({"Gemm", {}, {T({9, 33}), T({33, 17})}, {F32, B16}, 20, false, "no C"});
  add({"Einsum",
       A({{"equation", std::string("bij,bjk->bik")}}),
       {T({2, 5, 7}), T({2, 7, 3})},
       kFI,
       20});
  add({"Einsum", A({{"equation", std::string("ii->i")}}), {T({5, 5})}, {F32, I32}});
  add({"Einsum", A({{"equation", std::string("...j,j")}}), {T({2, 3, 4}), T({4})}, {F32, F64}, 20});
  add({"Conv",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 8, 9, 10}), T({16, 8, 3, 3}), T({16})},
       kF,
       20});
  add({"Conv",
       A({{"strides", ints({2, 2})}, {"group", int64_t{2}}, {"dilations", ints({2, 1})}}),
       {T({2, 8, 11, 10}), T({6, 4, 3, 3})},
       kF,
       20,
       false,
       "groups, strides, dilations"});
  add({"Conv",
       A({{"pads", ints({0, 1, 1, 0})}}),
       {T({1, 3, 7, 6}), T({4, 3, 2, 2}), T({4})},
       {F32, F16},
       20,
       false,
       "asymmetric pads"});
  add({"Conv",
       A({{"pads", ints({1, 1})}}),
       {T({2, 4, 15}), T({5, 4, 3}), T({5})},
       {F32, F64},
       20,
       false,
       "1-D"});
  add({"Conv", {}, {T({1, 2, 4, 5, 6}), T({3, 2, 2, 2, 2}), T({3})}, {F32}, 20, false, "3-D"});
  add({"ConvTranspose",
       A({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 6, 5, 4}), T({6, 3, 3, 3}), T({3})},
       kF,
       20});
  add({"ConvTranspose",
       A({{"strides", ints({2, 1})}, {"output_padding", ints({1, 0})}, {"group", int64_t{2}}}),
       {T({1, 4, 3, 5}), T({4, 2, 2, 3})},
       {F32, F16},
       20,
       false,
       "groups, output_padding"});
  add({"ConvTranspose",
       A({{"pads", ints({0, 1, 1, 0})}}),
       {T({1, 2, 4, 4}), T({2, 3, 3, 3})},
       {F32},
       20,
       false,
       "asymmetric"});
  // Resize and GridSample.
  add({"Resize",
       A({{"mode", std::string("nearest")}}),
       {T({1, 2, 5, 6}), None(), V(F32, {4}, {1, 1, 2, 1.5})},
       {F32, F16, I32, U8},
       10});
  add({"Resize",
       A({{"mode", std::string("nearest")}}),
       {T({2, 3, 4, 5}), None(), V(F32, {4}, {1, 1.5, 2, 1})},
       {F32},
       10,
       false,
       "a resized channel axis"});
  add({"Resize",
       A({{"mode", std::string("linear")}}),
       {T({2, 3, 300}), None(), V(F32, {3}, {1, 1, 1.5})},
       {F32},
       10,
       false,
       "1-D, rows wider than a block"});
  add({"Resize",
       A({{"mode", std::string("linear")},
          {"coordinate_transformation_mode", std::string("align_corners")}}),
       {T({1, 2, 5, 6}), None(), None(), Vi({1, 2, 9, 4})},
       kF,
       10});
  add({"Resize",
       A({{"mode", std::string("cubic")}, {"exclude_outside", int64_t{1}}}),
       {T({1, 2, 6, 7}), None(), V(F32, {4}, {1, 1, 0.5, 1.5})},
       {F32, F64},
       10});
  add({"Resize",
       A({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}),
       {T({1, 1, 12, 10}), None(), None(), Vi({1, 1, 5, 4})},
       {F32},
       10,
       false,
       "antialias"});
  add({"Resize",
       A({{"mode", std::string("linear")},
          {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
          {"extrapolation_value", 3.0}}),
       {T({1, 1, 6, 6}), V(F32, {8}, {0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3}), None(), Vi({1, 1, 5, 7})},
       {F32},
       10,
       false,
       "crop and resize, extrapolation"});
  add({"Resize",
       A({{"mode", std::string("nearest")},
          {"keep_aspect_ratio_policy", std::string("not_larger")},
          {"axes", ints({2, 3})}}),
       {T({1, 2, 6, 8}), None(), None(), Vi({9, 9})},
       {F32},
       10,
       false,
       "aspect policy"});
  add({"GridSample", {}, {T({2, 3, 5, 6}), T({2, 4, 7, 2}, -1.2, 1.2)}, kF, 10});
  add({"GridSample",
       A({{"mode", std::string("nearest")},
          {"padding_mode", std::string("border")},
          {"align_corners", int64_t{1}}}),
       {T({2, 3, 5, 6}), T({2, 4, 7, 2}, -1.2, 1.2)},
       {F32, F64},
       10});
  add({"GridSample",
       A({{"mode", std::string("cubic")}, {"padding_mode", std::string("reflection")}}),
       {T({1, 2, 5, 6}), T({1, 3, 4, 2}, -1.5, 1.5)},
       {F32, F64},
       10});
  add({"GridSample", {}, {T({1, 2, 3, 4, 5}), T({1, 2, 3, 2, 3}, -1, 1)}, {F32}, 10, false, "3-D"});
  // The fused ops (ops/core).
  add({"opforge::FusedGeluChain",
       A({{"chain", std::vector<int32_t>{1}}}),
       {T({4, 33}, -6, 6)},
       kF,
       2,
       true,
       "gelu(gelu)"});
  add({"opforge::FusedGeluChain",
       A({{"approximate", std::string("tanh")},
          {"chain", std::vector<int32_t>{2, 3, 6, 7, 4, 1, 5, 8}},
          {"chain_scalars", std::vector<float>{0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f}}}),
       {T({3, 1001}, -6, 6)},
       kF,
       2,
       true,
       "every stage"});
  add({"opforge::FusedConv",
       A({{"pads", ints({1, 1, 1, 1})}, {"activation", std::string("relu")}}),
       {T({2, 8, 9, 10}), T({16, 8, 3, 3}), T({16}), T({2, 16, 9, 10})},
       kF,
       20});
  add({"opforge::FusedConv",
       A({{"strides", ints({2, 2})}, {"activation", std::string("gelu")}}),
       {T({2, 4, 9, 8}), T({6, 4, 3, 3}), T({6})},
       {F32, F16},
       20});
  add({"opforge::FusedConv",
       A({{"activation", std::string("none")}}),
       {T({1, 4, 6, 6}), T({4, 4, 1, 1}), None(), T({1, 4, 6, 6})},
       {F32},
       20,
       false,
       "residual without bias"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("relu")}}),
       {T({3, 17, 29}), T({29, 13}), T({13})},
       kF,
       20});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu")}, {"transB", int64_t{1}}, {"alpha", 0.5}}),
       {T({2, 17, 32}), T({24, 32}), T({24})},
       kF,
       20});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("sigmoid")}}),
       {T({4, 8, 16}), T({4, 16, 8})},
       {F32, B16},
       20,
       false,
       "batched, no bias"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.3}}),
       {T({2, 3, 5, 8}), T({2, 3, 7, 8}), T({2, 3, 7, 6})},
       kF,
       10});
  add({"opforge::FusedAttention",
       A({{"scale", 0.2}, {"k_transposed", int64_t{1}}}),
       {T({3, 33, 16}), T({3, 16, 40}), T({3, 40, 16})},
       {F32, F16, B16},
       10,
       false,
       "K transposed"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.1}}),
       {T({1, 2, 9, 32}), T({1, 2, 400, 32}), T({1, 2, 400, 32})},
       {F32, F16},
       10,
       false,
       "K and V beyond shared memory"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.25}, {"layout", std::string("sb3e")}, {"heads", int64_t{4}}}),
       {T({9, 2, 96}), T({9, 2, 96}), T({9, 2, 96})},
       kF,
       10,
       false,
       "packed sb3e"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.1}, {"layout", std::string("sb3e")}, {"heads", int64_t{2}}}),
       {T({300, 1, 192}), T({300, 1, 192}), T({300, 1, 192})},
       {F32, F16},
       10,
       false,
       "packed sb3e beyond shared memory"});
  add({"opforge::FusedAddLayerNorm", {}, {T({4, 3, 40}), T({4, 3, 40}), T({40}), T({40})}, kF, 10});
  add({"opforge::FusedAddLayerNorm",
       A({{"axis", int64_t{1}}}),
       {T({2, 3, 50}), T({2, 3, 50}), T({3, 50})},
       {F32, F16},
       10});
  return c;
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

uint64_t seed() {
  static const uint64_t s = [] {
    const char* e = std::getenv("OPFORGE_TEST_SEED");
    const uint64_t v =
        e ? std::strtoull(e, nullptr, 10)
          : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::printf("gpu_onnx: random seed %llu (OPFORGE_TEST_SEED to repeat)\n",
                static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

TensorValue makeInput(const In& in, DataType t, std::mt19937_64& rng) {
  const DataType dt = in.dt == TT ? t : in.dt;
  TensorValue v;
  if (in.kind == In::kAbsent) return v;
  v.desc = TensorDesc{dt, in.dims};
  v.data.assign(v.desc.bytes(), 0);
  const int64_t n = v.desc.numel();
  if (in.kind == In::kValues) {
    for (int64_t i = 0; i < n; ++i)
      storeFromDouble(v.data.data(), dt, i, in.vals[static_cast<size_t>(i)]);
    return v;
  }
  if (in.kind == In::kUnique) {
    std::vector<int64_t> p(static_cast<size_t>(in.n));
    std::iota(p.begin(), p.end(), 0);
    // Unique along the last axis (ScatterElements lines, ScatterND tuples).
    const int64_t row = in.dims.empty() ? 1 : in.dims.back();
    for (int64_t r = 0; r < n; r += row) {
      std::shuffle(p.begin(), p.end(), rng);
      for (int64_t j = 0; j < row && r + j < n; ++j)
        storeFromDouble(v.data.data(), dt, r + j, static_cast<double>(p[j % p.size()]));
    }
    if (in.dims.size() == 2 && in.dims[1] == 1) {  // ScatterND [K, 1]: unique across all rows
      std::shuffle(p.begin(), p.end(), rng);
      for (int64_t r = 0; r < n; ++r)
        storeFromDouble(v.data.data(), dt, r, static_cast<double>(p[r]));
    }
    return v;
  }
  double lo = in.lo, hi = in.hi;
  if (dt == BOOL) {
    std::bernoulli_distribution b(0.5);
    bool any = false;
    for (int64_t i = 0; i < n; ++i) {
      const bool x = b(rng);
      any |= x;
      storeFromDouble(v.data.data(), dt, i, x ? 1 : 0);
    }
    if (!any && n) storeFromDouble(v.data.data(), dt, 0, 1);
    return v;
  }
  const bool is_unsigned = dt == U8 || dt == U16 || dt == U32 || dt == U64;
  if (is_unsigned && lo < 0) lo = 0;
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < n; ++i) {
    double x;
    for (int tries = 0;; ++tries) {
      x = u(rng);
      if (!isFloatType(dt)) x = std::round(x);
      if (std::fabs(x) > in.gap || tries > 100) break;  // never zero
    }
    if (x == 0 && lo < 1 && hi >= 1) x = 1;
    storeFromDouble(v.data.data(), dt, i, x);
  }
  return v;
}

Tolerance tolFor(DataType t, double factor) {
  switch (t) {
    case DataType::kFloat64:
      return {1e-11 * factor, 1e-11 * factor};
    case DataType::kFloat32:
      return {1e-5 * factor, 1e-5 * factor};
    case DataType::kFloat16:
      return {1e-3 * std::max(1.0, factor / 4), 1e-3 * std::max(1.0, factor / 4)};
    case DataType::kBFloat16:
      return {1e-2 * std::max(1.0, factor / 8), 1e-2 * std::max(1.0, factor / 8)};
    default:
      return {0, 0};
  }
}

std::string label(const Case& c, DataType t) {
  std::string s = c.op + "[" + dtypeName(t);
  for (const auto& [k, v] : c.attrs) s += " " + k + "=" + attrToString(v, 8);
  s += "]";
  if (!c.note.empty()) s += " (" + c.note + ")";
  return s;
}

std::shared_ptr<Registry> builtins() {
  static auto r = Registry::create();
  return r;
}

// Op keys: "Add" means "ai.onnx::Add".
std::string keyOf(const std::string& op) {
  return op.find("::") == std::string::npos ? "ai.onnx::" + op : op;
}

struct Coverage {
  std::set<std::string> ops;                         // ops with a case that ran
  std::map<std::string, std::set<int32_t>> tactics;  // CUDA tactics that ran and passed
  int hwc_runs = 0;                                  // channels-last runs that passed
};
Coverage& coverage() {
  static Coverage c;
  return c;
}

// Runs one case for one dtype on every CUDA tactic; returns false (with failures recorded) on any
// mismatch.
void runCase(const Case& c, DataType t, std::mt19937_64& rng) {
  const std::string key = keyOf(c.op);
  const RegisteredOp* op = builtins()->find(key);
  ASSERT_NE(op, nullptr) << key << " is not registered";
  std::vector<TensorValue> inputs;
  for (const auto& in : c.in) inputs.push_back(makeInput(in, t, rng));
  auto ref = runKernel(*builtins(), key, c.attrs, inputs, 0xff, 0);
  ASSERT_TRUE(ref.isOk()) << label(c, t) << ": the CPU reference fails: " << ref.status().message();
  bool any = false;
  for (const auto& tac : op->schema().tactics) {
    if (tac.backend != Backend::kCuda) continue;
    // Variants: 0 poisoned 0xff; 1 captured, poisoned 0x00; 2 unaligned (c.misalign); 3
    // channels-last (ops with an HWC combination, tactics that take it).
    const int variants = takesChannelsLast(op->schema()) ? 4 : c.misalign ? 3 : 2;
    for (int variant = 0; variant < variants; ++variant) {
      if (variant == 2 && !c.misalign) continue;
      gpu::RunOptions opt;
      opt.poison = variant == 1 ? 0x00 : 0xff;
      opt.capture = variant == 1;
      opt.misalign = variant == 2;
      opt.hwc = variant == 3;
      auto r = gpu::runOnDevice(*builtins(), key, c.attrs, inputs, tac.id, opt);
      if (!r && r.status().code() == StatusCode::kUnsupported)
        break;  // the tactic does not apply here
      const std::string where = label(c, t) + " tactic " + std::to_string(tac.id) + " " + tac.name +
                                (variant == 1   ? " (graph capture, 0x00 poison)"
                                 : variant == 2 ? " (unaligned)"
                                 : variant == 3 ? " (HWC)"
                                                : "");
      ASSERT_TRUE(r.isOk()) << where << ": " << r.status().message();
      ASSERT_TRUE(r->status.isOk()) << where << ": " << r->status.message();
      ASSERT_EQ(r->outputs.size(), ref->outputs.size()) << where;
      bool ok = true;
      for (size_t o = 0; o < ref->outputs.size(); ++o) {
        auto close =
            allClose(r->outputs[o], ref->outputs[o], tolFor(ref->outputs[o].desc.dtype, c.tol));
        EXPECT_TRUE(close) << where << ", output " << o;
        ok = ok && close;
      }
      if (ok && variant == 0) {
        coverage().tactics[key].insert(tac.id);
        any = true;
      }
      if (ok && variant == 3) ++coverage().hwc_runs;
    }
  }
  if (any) coverage().ops.insert(key);
}

// OPFORGE_GPU_ONNX_OPS=Gather,ai.onnx::Conv,opforge::FusedConv,... limits the cases to those ops
// (registry keys, ONNX ops with or without their domain), e.g. for compute-sanitizer runs; every
// named op must be registered and pass a CUDA case, as every op must without the filter (so a
// misspelt list cannot pass by running nothing).
std::set<std::string> opFilter() {
  std::set<std::string> f;
  const char* e = std::getenv("OPFORGE_GPU_ONNX_OPS");
  if (!e) return f;
  std::string s = e;
  for (size_t a = 0; a <= s.size();) {
    const size_t b = std::min(s.find(',', a), s.size());
    if (b > a) f.insert(keyOf(s.substr(a, b - a)));
    a = b + 1;
  }
  return f;
}

TEST(GpuOnnx, EveryOpTacticAndTypeMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed());
  const auto filter = opFilter();
  for (const Case& c : allCases())
    for (DataType t : c.types) {
      if (!filter.empty() && !filter.count(keyOf(c.op))) continue;
      SCOPED_TRACE(label(c, t));
      runCase(c, t, rng);
    }
  if (!filter.empty()) {
    int tactics = 0;
    for (const std::string& key : filter) {
      if (key == "opforge::Reformat") continue;  // the builder's op, tested with the engine
      const RegisteredOp* op = builtins()->find(key);
      EXPECT_NE(op, nullptr) << "OPFORGE_GPU_ONNX_OPS names " << key << ", which is not registered";
      if (!op) continue;
      EXPECT_TRUE(coverage().ops.count(key))
          << key << " (OPFORGE_GPU_ONNX_OPS) has no passing CUDA run";
      if (coverage().tactics.count(key))
        tactics += static_cast<int>(coverage().tactics[key].size());
    }
    std::printf(
        "gpu_onnx: %zu ops named, %zu ran, %d CUDA tactics matched the reference; %d channels-last "
        "runs\n",
        filter.size(), coverage().ops.size(), tactics, coverage().hwc_runs);
    return;
  }
  // Coverage: every built-in op with CUDA tactics ran on one of them; every CUDA tactic that
  // exists ran (and passed) on at least one case.
  std::string missing_ops, missing_tactics;
  for (const RegisteredOp* op : builtins()->ops()) {
    const std::string key = op->key();
    if (key == "opforge::Reformat") continue;  // the builder's op, tested with the engine
    bool cuda = false;
    for (const auto& t : op->schema().tactics) cuda |= t.backend == Backend::kCuda;
    if (!cuda) {
      missing_ops += " " + key + "(no CUDA tactic)";
      continue;
    }
    if (!coverage().ops.count(key)) {
      missing_ops += " " + key;
      continue;
    }
    for (const auto& t : op->schema().tactics)
      if (t.backend == Backend::kCuda && !coverage().tactics[key].count(t.id))
        missing_tactics += " " + key + "#" + std::to_string(t.id) + "(" + t.name + ")";
  }
  EXPECT_TRUE(missing_ops.empty()) << "ops without a passing CUDA run:" << missing_ops;
  // cuDNN algorithms that the GPU does not offer for any case are reported, not failed.
  if (!missing_tactics.empty())
    std::printf("gpu_onnx: tactics that never applied:%s\n", missing_tactics.c_str());
  int ops = 0, tactics = 0;
  for (const auto& [k, ts] : coverage().tactics) ++ops, tactics += static_cast<int>(ts.size());
  std::printf("gpu_onnx: %d ops, %d CUDA tactics matched the reference; %d channels-last runs\n",
              ops, tactics, coverage().hwc_runs);
  EXPECT_GT(coverage().hwc_runs, 0) << "no tactic ran on channels-last tensors";
}

// ---------------------------------------------------------------------------------------------
// The case table, without a GPU
// ---------------------------------------------------------------------------------------------

std::string describeIn(const In& in) {
  static const char* kinds[] = {"random", "values", "absent", "unique"};
  std::string s = kinds[in.kind];
  s += " dt=" + (in.dt == TT ? std::string("case") : dtypeName(in.dt));
  s += " dims=" + dimsToString(in.dims);
  char b[128];
  std::snprintf(b, sizeof b, " lo=%.17g hi=%.17g gap=%.17g n=%lld", in.lo, in.hi, in.gap,
                static_cast<long long>(in.n));
  s += b;
  s += " vals=[";
  for (size_t i = 0; i < in.vals.size(); ++i) {
    std::snprintf(b, sizeof b, "%s%.17g", i ? "," : "", in.vals[i]);
    s += b;
  }
  return s + "]";
}

// One line per case: the op, its note, types, tolerance factor and the tolerance it gives for each
// float type, the variants it runs in (misaligned; channels-last where the op takes HWC), the
// attributes and every input.
std::string describeCase(const Case& c, const RegisteredOp& op) {
  std::string s = keyOf(c.op) + " | note=" + c.note + " | types=";
  for (DataType t : c.types) s += dtypeName(t) + ",";
  char b[64];
  std::snprintf(b, sizeof b, " | factor=%.17g", c.tol);
  s += b;
  for (DataType t : {F64, F32, F16, B16})
    s += " " + dtypeName(t) + "=" + describeTolerance(tolFor(t, c.tol));
  s += std::string(" | misalign=") + (c.misalign ? "1" : "0") +
       " hwc=" + (takesChannelsLast(op.schema()) ? "1" : "0");
  s += " | attrs=" + describeAttrs(c.attrs);
  for (size_t i = 0; i < c.in.size(); ++i)
    s += " | in" + std::to_string(i) + "=" + describeIn(c.in[i]);
  return s;
}

// Runs on any machine (no GPU needed): every case names a registered op and at least one type, and
// every built-in op has a case (so a missing case fails on a CPU machine too, before the GPU run's
// coverage check). OPFORGE_PRINT_CASES=1 prints the whole table, one line per case, each starting
// with "case| " (grep and sort them to compare two versions of the table).
TEST(GpuOnnxCases, EveryCaseNamesARegisteredOpAndEveryOpHasACase) {
  const bool print = std::getenv("OPFORGE_PRINT_CASES") != nullptr;
  std::set<std::string> with_case;
  for (const Case& c : allCases()) {
    const std::string key = keyOf(c.op);
    const RegisteredOp* op = builtins()->find(key);
    EXPECT_NE(op, nullptr) << key << " has cases but is not a registered op";
    EXPECT_FALSE(c.types.empty()) << key << ": a case with no type runs nothing";
    if (!op) continue;
    with_case.insert(key);
    if (print) std::printf("case| %s\n", describeCase(c, *op).c_str());
  }
  for (const RegisteredOp* op : builtins()->ops()) {
    if (op->key() == "opforge::Reformat") continue;  // the builder's op, tested with the engine
    EXPECT_TRUE(with_case.count(op->key())) << op->key() << " has no GPU case";
  }
}

// ---------------------------------------------------------------------------------------------
// Run-time errors: out-of-range indices are reported, never read out of bounds
// ---------------------------------------------------------------------------------------------

TEST(GpuOnnx, IndexErrorsAreReportedThroughTheDeviceRecord) {
  SKIP_WITHOUT_GPU();
  struct Bad {
    std::string op;
    Attrs attrs;
    std::vector<TensorValue> in;
    int64_t value, position;
  };
  std::mt19937_64 rng(seed());
  auto idx = [](std::vector<int64_t> dims, std::vector<double> v) {
    TensorValue t;
    t.desc = TensorDesc{DataType::kInt64, std::move(dims)};
    t.data.resize(t.desc.bytes());
    for (size_t i = 0; i < v.size(); ++i)
      storeFromDouble(t.data.data(), DataType::kInt64, static_cast<int64_t>(i), v[i]);
    return t;
  };
  std::vector<Bad> bad{
      {"ai.onnx::Gather",
       {{"axis", int64_t{0}}},
       {randomTensor(F32, {5, 4}, rng), idx({3}, {1, 7, 2})},
       7,
       1},
      {"ai.onnx::GatherElements",
       {{"axis", int64_t{1}}},
       {randomTensor(F32, {2, 3}, rng), idx({2, 2}, {0, 1, -4, 2})},
       -4,
       2},
      {"ai.onnx::GatherND", {}, {randomTensor(F32, {4, 3}, rng), idx({2, 1}, {3, 4})}, 4, 1},
      {"ai.onnx::ScatterND",
       {},
       {randomTensor(F32, {4, 3}, rng), idx({2, 1}, {-5, 1}), randomTensor(F32, {2, 3}, rng)},
       -5,
       0},
      {"ai.onnx::ScatterElements",
       {{"axis", int64_t{0}}},
       {randomTensor(F32, {3, 2}, rng), idx({1, 2}, {0, 9}), randomTensor(F32, {1, 2}, rng)},
       9,
       1},
  };
  for (const auto& b : bad) {
    const RegisteredOp* op = builtins()->find(b.op);
    ASSERT_NE(op, nullptr);
    for (const auto& tac : op->schema().tactics) {
      if (tac.backend != Backend::kCuda) continue;
      // The runner hands the tactic a pinned record through KernelContext::errorRecord().
      auto r = gpu::runOnDevice(*builtins(), b.op, b.attrs, b.in, tac.id);
      ASSERT_TRUE(r.isOk()) << b.op << " tactic " << tac.id << ": " << r.status().message();
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << b.op << ": the device must not fault";
      const DeviceErrorRecord* rec = &r->record;
      EXPECT_EQ(rec->flag, 1u) << b.op << " tactic " << tac.id << " did not report the bad index";
      EXPECT_EQ(rec->kind, kDeviceErrorIndex);
      EXPECT_EQ(rec->value, b.value) << b.op;
      EXPECT_EQ(rec->position, b.position) << b.op;
      EXPECT_EQ(rec->input, 1) << b.op;
      EXPECT_EQ(r->status.code(), StatusCode::kOutOfRange) << r->status.message();
    }
  }
}

TEST(GpuOnnx, TheEngineTurnsADeviceIndexErrorIntoAnErrorNamingTheLayer) {
  SKIP_WITHOUT_GPU();
  NetworkDefinition net(builtins());
  auto x = *net.addInput("x", DataType::kFloat32, {5, 4});
  auto i = *net.addInput("i", DataType::kInt64, {3});
  auto g = *net.addOp("ai.onnx::Gather", {x, i}, {{"axis", int64_t{0}}}, "lookup");
  ASSERT_TRUE(net.markOutput(g[0], "y").isOk());
  BuilderConfig cfg;
  cfg.backend = Backend::kCuda;
  auto plan = Builder(builtins()).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "gather.plan", builtins());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  std::vector<float> xs(20, 1.f);
  ASSERT_TRUE(ctx->setInput("x", xs.data(), 80).isOk());
  for (int rep = 0; rep < 3; ++rep) {  // the third run replays a CUDA graph
    const std::vector<int64_t> good{0, -1, 4}, bad{0, 11, 4};
    ASSERT_TRUE(ctx->setInput("i", good.data(), 24).isOk());
    Status st = ctx->execute();
    EXPECT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(ctx->setInput("i", bad.data(), 24).isOk());
    st = ctx->execute();
    EXPECT_FALSE(st.isOk()) << "run " << rep << ": the index 11 was not reported";
    EXPECT_NE(st.message().find("lookup"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("holds 11 at position 1"), std::string::npos) << st.message();
  }
}

// ---------------------------------------------------------------------------------------------
// Engine-level: fused networks on the GPU against CPU plans, and --fp16 lowering
// ---------------------------------------------------------------------------------------------

std::shared_ptr<Engine> buildNet(const NetworkDefinition& net, Backend b, bool fp16 = false) {
  BuilderConfig cfg;
  cfg.backend = b;
  cfg.fp16 = fp16;
  auto plan = Builder(builtins()).buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan) return nullptr;
  auto e = Engine::loadMemory(std::move(*plan), "net.plan", builtins());
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? *e : nullptr;
}

std::vector<float> runNet(Engine& e, const std::vector<float>& x) {
  auto ctx = std::move(e.createExecutionContext()).value();
  ctx->setDebugPoison(true);
  EXPECT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
  for (int rep = 0; rep < 3; ++rep) {
    Status st = ctx->execute();
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  Tensor y = *ctx->output("y");
  return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
}

// A residual block and an MLP head: Conv+BN+Relu, Conv+BN+Add+Relu, GlobalAveragePool, Flatten,
// MatMul+Add+Relu — the patterns conv_fusion and gemm_fusion rewrite.
NetworkDefinition blockNet(std::mt19937_64& rng) {
  NetworkDefinition net(builtins());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 8, 12, 12});
  int consts = 0;
  auto cst = [&](std::vector<int64_t> d, double lo, double hi) {
    return *net.addConstant("c" + std::to_string(consts++), randomTensor(F32, d, rng, lo, hi));
  };
  auto bn = [&](TensorRef in, const std::string& name) {
    return (*net.addOp(
        "ai.onnx::BatchNormalization",
        {in, cst({8}, 0.5, 1.5), cst({8}, -0.2, 0.2), cst({8}, -0.5, 0.5), cst({8}, 0.5, 2.0)}, {},
        name))[0];
  };
  auto c1 = (*net.addOp("ai.onnx::Conv", {x, cst({8, 8, 3, 3}, -0.2, 0.2)},
                        {{"pads", ints({1, 1, 1, 1})}}, "conv1"))[0];
  auto r1 = (*net.addOp("ai.onnx::Relu", {bn(c1, "bn1")}, {}, "relu1"))[0];
  auto c2 = (*net.addOp("ai.onnx::Conv", {r1, cst({8, 8, 3, 3}, -0.2, 0.2)},
                        {{"pads", ints({1, 1, 1, 1})}}, "conv2"))[0];
  auto a = (*net.addOp("ai.onnx::Add", {bn(c2, "bn2"), x}, {}, "add"))[0];
  auto r2 = (*net.addOp("ai.onnx::Relu", {a}, {}, "relu2"))[0];
  auto p = (*net.addOp("ai.onnx::GlobalAveragePool", {r2}, {}, "pool"))[0];
  auto f = (*net.addOp("ai.onnx::Flatten", {p}, {}, "flatten"))[0];
  auto mm = (*net.addOp("ai.onnx::MatMul", {f, cst({8, 16}, -0.5, 0.5)}, {}, "fc"))[0];
  auto ab = (*net.addOp("ai.onnx::Add", {mm, cst({16}, -0.1, 0.1)}, {}, "fc_bias"))[0];
  auto r3 = (*net.addOp("ai.onnx::Relu", {ab}, {}, "fc_relu"))[0];
  auto sm = (*net.addOp("ai.onnx::Softmax", {r3}, {}, "softmax"))[0];
  EXPECT_TRUE(net.markOutput(sm, "y").isOk());
  return net;
}

TEST(GpuOnnx, FusedNetworkOnTheGpuMatchesTheCpuPlan) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed());
  auto net = blockNet(rng);
  auto cpu = buildNet(net, Backend::kCpu);
  auto gpu = buildNet(net, Backend::kCuda);
  ASSERT_TRUE(cpu && gpu);
  int fused = 0;
  for (const auto& l : gpu->layers()) fused += l.op.rfind("opforge::Fused", 0) == 0;
  EXPECT_GE(fused, 3) << gpu->inspect();
  TensorValue xin = randomTensor(F32, {2, 8, 12, 12}, rng);
  std::vector<float> x(static_cast<size_t>(xin.desc.numel()));
  std::memcpy(x.data(), xin.data.data(), x.size() * 4);
  const auto want = runNet(*cpu, x), got = runNet(*gpu, x);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << i;
  auto half = buildNet(net, Backend::kCuda, true);
  ASSERT_TRUE(half);
  const auto lowered = runNet(*half, x);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(lowered[i], want[i], 2e-2 + 2e-2 * std::fabs(want[i])) << i;
}

}  // namespace
