// op_cases.h — how an op's GPU test cases are written and registered. Each op's cases live in
// its own folder, beside its code, and register themselves with a static registrar; only the test
// binaries compile them (never the op libraries), so adding an op, built-in or contrib, is one
// folder:
//
//   ops/onnx/<op>/<op>_cases.cc, ops/core/<op>/<op>_cases.cc   OPFORGE_BUILTIN_CASES: declarative
//       cases (inputs, value ranges, dtypes, tolerance factor, layouts) that
//       opforge_gpu_onnx_tests (tests/gpu_onnx) runs on every CUDA tactic of the op;
//   ops/contrib/<op>/<op>_cases.cc                              OPFORGE_CONTRIB_CASES: a function
//       of (concrete combination, random generator) giving the op's cases, run by
//       opforge_gpu_tests (tests/gpu) on every CUDA tactic the combination allows;
//   ops/contrib/<op>/<op>_cases.py                              the Python OpCase of the op
//       (tests/python/op_case.py, collected into opforge_cases.OP_CASES).
//
// CMake collects the .cc files by glob (`*_cases.cc` in tests/gpu_onnx/CMakeLists.txt and
// tests/gpu/CMakeLists.txt; the op libraries' globs in the top CMakeLists.txt exclude them). The
// coverage checks walk the registry: every op of the registry needs cases (GpuOnnxCases.*,
// GpuOpsCases.*, which run without a GPU), and on the GPU every CUDA tactic must run.
//
// Tolerances — the one written table. A result passes when |got - want| <= atol + rtol * |want|
// (FP16: plus one fp16 ulp of the value); NaN passes only against NaN, an infinity only against
// the same infinity; integers and BOOL are exact. The rules, atol = rtol unless two are given:
//
//   rule                       FP64      FP32          FP16               BF16
//   toleranceFor(t) (harness)  1e-12     1e-5          1e-3               1e-2
//   scaledTolerance(t, f)      1e-11 f   1e-5 f        1e-3 max(1, f/4)   1e-2 max(1, f/8)
//   samplingTolerance(t)       1e-12     5e-5 / 1e-4   2e-3               1.5e-2
//   exact()                    0         0             0                  0
//   tacticTolerance(t, f, tf32)  scaledTolerance, except FP32 on a TF32 tactic (TacticDef::tf32):
//                              2.5e-3 max(1, f/2). The tensor cores truncate each product's FP32
//                              inputs to TF32's 10-bit mantissa (up to 2^-10 relative), an error
//                              the FP32 reference does not make and FP16 cases do not see (their
//                              inputs are FP16 already); its sum over K products grows like
//                              sqrt(K). On the H200, Conv (K = 72) and MatMul (K = 29, 128) at f =
//                              20 were off by up to 8.1e-3 on outputs of about 0.1 to 0.5 (FP16's
//                              rule, 5e-3, failed there)
//
// Which op uses which: the built-in ops scaledTolerance, each case giving its factor f (Case::tol);
// a contrib op's case function gives a tolerance per output (GpuCase::tol; none: toleranceFor of
// the output's dtype). exact() is for data movement (circ_pad, non_zero); toleranceFor for
// elemwise_add_inplace, FusedGelu(Grad) and circ_pad_grad.
//
// The factor f of scaledTolerance is for ops that accumulate in a different order or precision
// than the reference (which accumulates in double): 1 for elementwise and data movement ops, 2 for
// the fused GELU chain, 10 for reductions, normalizations, softmax, pooling, scans, resampling,
// attention and the atomic scatter reductions, 20 for MatMul/Gemm/Einsum/Conv(Transpose) and their
// fused forms (cuBLASLt/cuDNN accumulate FP32/FP16/BF16 in FP32). samplingTolerance is
// DeformableAggregation(Grad)'s: fp32 sums of up to 312 weighted bilinear samples, whose fp32
// locations round x = u*W - 0.5 differently from the float64 reference; its location gradients,
// which scale with H and W, use 2e-4 / 1e-3.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "op_harness.h"
#include "opforge/op.h"

namespace opforge::test::cases {

// ---- Tolerance rules (the table above) ---------------------------------------------------------

inline Tolerance exact() {
  return {0, 0};
}

inline Tolerance scaledTolerance(DataType t, double factor) {
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

// The tolerance of a built-in op's output of type t on a tactic (TF32 tactics: see the table).
inline Tolerance tacticTolerance(DataType t, double factor, bool tf32) {
  if (tf32 && t == DataType::kFloat32) {
    const double tol = 2.5e-3 * std::max(1.0, factor / 2);
    return {tol, tol};
  }
  return scaledTolerance(t, factor);
}

inline Tolerance samplingTolerance(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return {5e-5, 1e-4};
    case DataType::kFloat16:
      return {2e-3, 2e-3};
    case DataType::kBFloat16:
      return {1.5e-2, 1.5e-2};
    default:
      return toleranceFor(t);
  }
}

// ---- Built-in ops: declarative cases (opforge_gpu_onnx_tests) -----------------------------------

constexpr DataType F32 = DataType::kFloat32, F16 = DataType::kFloat16, B16 = DataType::kBFloat16,
                   F64 = DataType::kFloat64, I8 = DataType::kInt8, I16 = DataType::kInt16,
                   I32 = DataType::kInt32, I64 = DataType::kInt64, U8 = DataType::kUInt8,
                   U16 = DataType::kUInt16, U32 = DataType::kUInt32, U64 = DataType::kUInt64,
                   BOOL = DataType::kBool, TT = DataType::kUndefined;

inline const std::vector<DataType> kF{F32, F16, B16, F64};
inline const std::vector<DataType> kFI{F32, F16, B16, F64, I32, I64, I8, U8};
inline const std::vector<DataType> kInts{I32, I64, I8, U8, I16, U16, U32, U64};
inline const std::vector<DataType> kAll{F32, F16, B16, F64, I32, I64, I8,
                                        U8,  I16, U16, U32, U64, BOOL};

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
// Random, of the case's type.
inline In T(std::vector<int64_t> d, double lo = -2, double hi = 2, double gap = 0.05) {
  In i;
  i.dims = std::move(d);
  i.lo = lo, i.hi = hi, i.gap = gap;
  return i;
}
// Random, of a fixed type (zero allowed).
inline In R(DataType dt, std::vector<int64_t> d, double lo, double hi) {
  In i = T(std::move(d), lo, hi, 0);
  i.dt = dt;
  return i;
}
// Explicit values.
inline In V(DataType dt, std::vector<int64_t> d, std::vector<double> v) {
  In i;
  i.kind = In::kValues;
  i.dt = dt;
  i.dims = std::move(d);
  i.vals = std::move(v);
  return i;
}
inline In Vi(std::vector<int64_t> v) {  // a 1-D INT64 constant
  std::vector<double> d(v.begin(), v.end());
  return V(I64, {static_cast<int64_t>(v.size())}, d);
}
// Distinct values in [0, n) along the last axis (indices that must not collide).
inline In U(DataType dt, std::vector<int64_t> d, int64_t n) {
  In i;
  i.kind = In::kUnique;
  i.dt = dt;
  i.dims = std::move(d);
  i.n = n;
  return i;
}
// An optional input left out.
inline In None() {
  In i;
  i.kind = In::kAbsent;
  return i;
}

// The concrete tensor of an input description: of type t where the description leaves the type to
// the case (dt == TT); empty for an absent input.
inline TensorValue makeInput(const In& in, DataType t, std::mt19937_64& rng) {
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

// One case: the op ("Add" means "ai.onnx::Add"), its attributes and inputs, the dtypes it runs in
// (each a run of every CUDA tactic), the tolerance factor of scaledTolerance, and whether it also
// runs with every tensor offset by one element (no 16-byte alignment: the scalar paths). Every
// case also runs poisoned 0xff, captured in a CUDA graph (poisoned 0x00) and, for ops with a
// channels-last combination, channels-last.
struct Case {
  std::string op;
  Attrs attrs;
  std::vector<In> in;
  std::vector<DataType> types;
  double tol = 1;
  bool misalign = false;  // also run with unaligned tensors
  std::string note = {};
};

inline Attrs A(std::initializer_list<std::pair<const std::string, AttrValue>> l) {
  return Attrs(l);
}
inline std::vector<int64_t> ints(std::initializer_list<int64_t> l) {
  return std::vector<int64_t>(l);
}

// What a case function adds its cases to: add({"Relu", {}, {T({5, 67})}, kF});
struct CaseList {
  std::vector<Case> cases;
  void operator()(Case c) { cases.push_back(std::move(c)); }
};
using BuiltinCaseFn = void (*)(CaseList&);

struct BuiltinRegistration {
  std::string file;
  BuiltinCaseFn fn;
};
inline std::vector<BuiltinRegistration>& builtinCaseRegistry() {
  static std::vector<BuiltinRegistration> r;
  return r;
}
struct RegisterBuiltinCases {
  RegisterBuiltinCases(const char* file, BuiltinCaseFn fn) {
    builtinCaseRegistry().push_back({file, fn});
  }
};

// Every registered built-in case, the files in name order (so the order never depends on the
// link order), each file's cases in the order it adds them.
// A case's op as a registry key: "Add" means "ai.onnx::Add".
inline std::string keyOf(const std::string& op) {
  return op.find("::") == std::string::npos ? "ai.onnx::" + op : op;
}

inline std::vector<Case> builtinCases() {
  auto regs = builtinCaseRegistry();
  std::stable_sort(regs.begin(), regs.end(),
                   [](const auto& a, const auto& b) { return a.file < b.file; });
  CaseList all;
  for (const auto& r : regs) r.fn(all);
  return all.cases;
}

// In an op's <op>_cases.cc, inside namespace opforge::test::cases:
//   OPFORGE_BUILTIN_CASES(relu) { add({"Relu", {}, {T({5, 67}, -9, 9)}, kF, 1, true}); }
#define OPFORGE_BUILTIN_CASES(ident)                                                        \
  static void opforgeBuiltinCases_##ident(::opforge::test::cases::CaseList& add);           \
  static const ::opforge::test::cases::RegisterBuiltinCases opforgeBuiltinCasesReg_##ident( \
      __FILE__, &opforgeBuiltinCases_##ident);                                              \
  static void opforgeBuiltinCases_##ident(::opforge::test::cases::CaseList& add)

// ---- Contrib ops: cases per combination (opforge_gpu_tests) -------------------------------------

// One case of a contrib op: concrete inputs for one combination, and a tolerance per output
// (empty: toleranceFor of each output's dtype).
struct GpuCase {
  std::string name;
  Attrs attrs;
  std::vector<TensorValue> inputs;
  std::vector<Tolerance> tol;
};
using ContribCaseFn = std::function<std::vector<GpuCase>(const ConcreteCombo&, std::mt19937_64&)>;

// Op key -> its case function.
inline std::map<std::string, ContribCaseFn>& contribCaseRegistry() {
  static std::map<std::string, ContribCaseFn> r;
  return r;
}
struct RegisterContribCases {
  RegisterContribCases(const char* key, ContribCaseFn fn) {
    if (!contribCaseRegistry().emplace(key, std::move(fn)).second) {
      std::fprintf(stderr, "op_cases: two case functions registered for %s\n", key);
      std::abort();
    }
  }
};

// In an op's <op>_cases.cc, inside namespace opforge::test::cases, after the case function:
//   OPFORGE_CONTRIB_CASES(nonZeroCases, "example::non_zero_plugin");
#define OPFORGE_CONTRIB_CASES(fn, key) \
  static const ::opforge::test::cases::RegisterContribCases opforgeContribCasesReg_##fn(key, fn)

}  // namespace opforge::test::cases
