// op_harness.h — runs any op on concrete inputs, directly through its kernel or through the whole
// engine (builder, plan, runtime), with poisoned outputs, and compares results.
//
// Tolerances (also in docs/testing.md): compared with |got - want| <= atol + rtol * |want|;
//   FP64 1e-12 / 1e-12, FP32 1e-5 / 1e-5, FP16 1e-3 / 1e-3 (plus one fp16 ulp of the value),
//   BF16 1e-2 / 1e-2, integers and BOOL exact. NaN passes only against NaN.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>

#include <random>
#include <string>
#include <vector>

#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/runtime.h"

namespace opforge::test {

struct Tolerance {
  double atol = 0, rtol = 0;
};
Tolerance toleranceFor(DataType t);

// Uniform random values in [lo, hi] (integers: rounded; BOOL: 0/1), never all zero.
TensorValue randomTensor(DataType t, const std::vector<int64_t>& dims, std::mt19937_64& rng,
                         double lo = -1.0, double hi = 1.0);
TensorValue fromFloats(const std::vector<int64_t>& dims, const std::vector<float>& v);
// An INT64 tensor of the given dims holding v (v.size() == product of dims).
TensorValue fromInt64s(const std::vector<int64_t>& dims, const std::vector<int64_t>& v);
// A tensor of type t and the given dims holding v (stored as storeFromDouble stores them; fewer
// values than elements leave the rest zero).
TensorValue fromValues(DataType t, std::vector<int64_t> dims, const std::vector<double>& v);
std::vector<double> toDoubles(const TensorValue& t);
// Fails the test unless `st` is an error whose message contains every one of `parts`.
void expectError(const Status& st, std::initializer_list<const char*> parts);

// A directory of the running test's own, created on the first call of the test and removed with
// everything in it when the test ends (kept when OPFORGE_KEEP_TEST_DIRS=1):
// TempDir()/opforge-<Suite>.<Test>-<pid>-XXXXXX. Unique per test and per process, so tests that
// CTest runs in parallel (or a repeated run of the same test) never share a path.
//   std::string plan = test::testDir() + "/good.plan";
std::string testDir();

// The build tree (or $OPFORGE_BINARY_DIR; installed: the prefix above libopforge.so), the contrib
// op library in it, and a registry that has it loaded.
std::string binaryDir();
std::string contribLibrary();
std::shared_ptr<Registry> contribRegistry();
// A registry with `library` loaded (once per path; a load error fails the test). Installed, the
// harness is opforge::harness and opforge_add_op_test passes the op library as OPFORGE_OP_LIBRARY:
//   auto reg = test::registryWith(OPFORGE_OP_LIBRARY);
std::shared_ptr<Registry> registryWith(const std::string& library);

struct OpRun {
  std::vector<TensorValue> outputs;  // real shapes (data-dependent sizes applied)
};

// Runs tactic `tactic` of `key` on host memory. Outputs are filled with `poison` bytes first.
// Inputs keep their descriptions' formats; output o takes out_formats[o] where given (LINEAR).
Result<OpRun> runKernel(Registry& reg, const std::string& key, const Attrs& attrs,
                        const std::vector<TensorValue>& inputs, uint8_t poison, int32_t tactic = 0,
                        const std::vector<Format>& out_formats = {});
// Builds a one-node network from `inputs` (as network inputs), builds a plan, reloads it from
// bytes and runs it; returns the outputs.
Result<OpRun> runEngine(std::shared_ptr<Registry> reg, const std::string& key, const Attrs& attrs,
                        const std::vector<TensorValue>& inputs);
// runEngine with a build configuration, activation memory poisoned (0xFF) before the run.
Result<OpRun> runEngineWith(std::shared_ptr<Registry> reg, const std::string& key,
                            const Attrs& attrs, const std::vector<TensorValue>& inputs,
                            const BuilderConfig& cfg);

// Every tactic of op `key` through the whole engine, each pinned in a plan of its own
// (BuilderConfig::layer_tactics) with poisoned activation memory: the CPU reference and the op's
// further CPU tactics in CPU plans, and — when a CUDA device is present — each CUDA tactic in a
// CUDA plan (TF32 off), against the CPU reference run directly (runKernel, poisoned outputs),
// within `tol` (default: toleranceFor each output's dtype). A tactic that does not apply to these
// inputs is listed in the report, not failed; one that applies and differs, or fails, fails the
// calling test. Usage, in an op library's test (opforge_add_op_test):
//   auto r = test::checkOpTactics(reg, "ext::silu_mul", {}, {a, b});
//   EXPECT_EQ(r.checked.size(), r.gpu ? 2u : 1u);  // the reference, and the CUDA tactic on a GPU
struct TacticReport {
  std::vector<std::string> checked;         // "cpu 0 reference", "cuda 1 cuda.generic"
  std::vector<std::string> not_applicable;  // the same form
  bool gpu = false;                         // a CUDA device was present
};
TacticReport checkOpTactics(std::shared_ptr<Registry> reg, const std::string& key,
                            const Attrs& attrs, const std::vector<TensorValue>& inputs,
                            std::optional<Tolerance> tol = std::nullopt);

// Compares element by element with the dtype's tolerance; the message names the first bad index.
::testing::AssertionResult allClose(const TensorValue& got, const TensorValue& want, Tolerance tol);
::testing::AssertionResult allClose(const TensorValue& got, const TensorValue& want);

// The full check of one case: the reference run twice with different poison patterns must agree
// bit for bit (every output element written, deterministic) and the engine path must agree with
// the reference.
void checkOp(std::shared_ptr<Registry> reg, const std::string& key, const Attrs& attrs,
             const std::vector<TensorValue>& inputs);

// Exact, stable text forms for printing case tables (OPFORGE_PRINT_CASES=1 in the GPU test
// binaries), so that two versions of a table can be compared with diff: every attribute with its
// type and every value at full precision (doubles %.17g, floats %.9g, tensors as dtype, dims and
// bytes in hex); a tensor as dtype, dims and a 64-bit FNV-1a hash of its bytes; a tolerance %.17g.
std::string describeAttrs(const Attrs& attrs);
std::string describeTensor(const TensorValue& t);
std::string describeTolerance(Tolerance tol);

}  // namespace opforge::test
