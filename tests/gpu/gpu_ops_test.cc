// opforge_gpu_tests: every CUDA tactic of every contrib op, for every type combination it is
// allowed with, on fresh random inputs (never zeros), with outputs and workspace poisoned (0xff:
// NaN for floats, -1 for integers), compared with the CPU reference (tactic 0) — aligned and with
// every tensor offset by one element (not 16-byte aligned) — plus determinism, in-place aliasing,
// CUDA graph capture and the run-time table checks of deformable aggregation.
//
// The cases live in each op's folder (ops/contrib/<op>/<op>_cases.cc, registered with
// OPFORGE_CONTRIB_CASES); tests/op_cases.h describes them and holds the tolerance table.
// Every test skips itself when no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

#include "gpu_runner.h"
#include "op_cases.h"
#include "op_harness.h"
#include "ops/contrib/deformable_aggregation/da_problem.h"

using namespace opforge;
using namespace opforge::test;
using namespace opforge::test::cases;
using namespace opforge::gpu;

namespace {

#define SKIP_WITHOUT_GPU()                                            \
  do {                                                                \
    std::string why;                                                  \
    if (!deviceAvailable(&why)) GTEST_SKIP() << why;                  \
    ASSERT_TRUE(opsRegistry()) << "cannot load " << opsLibraryPath(); \
  } while (0)

// Every contrib op with cases (OPFORGE_CONTRIB_CASES), by key.
const std::map<std::string, ContribCaseFn>& caseTable() {
  return contribCaseRegistry();
}

std::vector<std::string> opKeys() {
  std::vector<std::string> k;
  for (const auto& [key, fn] : caseTable()) k.push_back(key);
  return k;
}

const RegisteredOp* findOp(const std::string& key) {
  return opsRegistry()->find(key);
}

// The concrete combinations of an op.
std::vector<ConcreteCombo> combosOf(const RegisteredOp& op) {
  std::vector<ConcreteCombo> all;
  const int positions = static_cast<int>(op.schema().inputs.size() + op.schema().outputs.size());
  for (const auto& c : op.schema().combos) {
    auto r = expandCombo(c, positions);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    if (!r) continue;
    for (auto& cc : *r) {
      bool seen = false;
      for (const auto& a : all) seen |= a.types == cc.types && a.tactic_ids == cc.tactic_ids;
      if (!seen) all.push_back(cc);
    }
  }
  return all;
}

std::string comboName(const ConcreteCombo& c) {
  std::string s;
  for (DataType t : c.types) s += (s.empty() ? "" : ",") + dtypeName(t);
  return s;
}

}  // namespace

TEST(GpuOps, EveryContribOpHasGpuCases) {
  SKIP_WITHOUT_GPU();
  std::set<std::string> lib, table;
  for (const RegisteredOp* op : opsRegistry()->ops())
    if (!op->builtin()) lib.insert(op->key());
  for (const auto& k : opKeys()) table.insert(k);
  EXPECT_EQ(lib, table)
      << "every op of libopforge_ops.so needs cases in its folder (ops/contrib/<op>/<op>_cases.cc)";
}

// Runs on any machine (no GPU needed): the contrib library loads, every op of it has cases and
// every op in the case table is in it, and every op's case function gives at least one case for
// a combination that has a CUDA tactic. OPFORGE_PRINT_CASES=1 prints every case of every
// combination (inputs generated with the seed the GPU test uses), one line each, starting with
// "case| " (grep and sort them to compare two versions of the table).
TEST(GpuOpsCases, EveryContribOpHasCasesAndEveryCaseIsInTheLibrary) {
  ASSERT_TRUE(opsRegistry()) << "cannot load " << opsLibraryPath();
  const bool print = std::getenv("OPFORGE_PRINT_CASES") != nullptr;
  std::set<std::string> lib, table;
  for (const RegisteredOp* op : opsRegistry()->ops())
    if (!op->builtin()) lib.insert(op->key());
  for (const auto& k : opKeys()) table.insert(k);
  EXPECT_EQ(lib, table) << "every op of libopforge_ops.so needs GPU cases "
                           "(ops/contrib/<op>/<op>_cases.cc), and only those";
  for (const std::string& key : opKeys()) {
    const RegisteredOp* op = findOp(key);
    if (!op) continue;
    std::mt19937_64 rng(std::hash<std::string>{}(key));
    size_t cuda_cases = 0;
    for (const ConcreteCombo& combo : combosOf(*op)) {
      std::string tactics;
      for (int32_t id : combo.tactic_ids) tactics += std::to_string(id) + ",";
      bool any_cuda = false;
      for (const auto& t : op->schema().tactics)
        any_cuda |=
            t.backend == Backend::kCuda &&
            (combo.tactic_ids.empty() || std::find(combo.tactic_ids.begin(), combo.tactic_ids.end(),
                                                   t.id) != combo.tactic_ids.end());
      const auto cases = caseTable().at(key)(combo, rng);
      if (any_cuda) cuda_cases += cases.size();
      for (const GpuCase& c : cases) {
        if (!print) continue;
        std::string s = key + " | combo=" + comboName(combo) + " tactics=" + tactics +
                        " | case=" + c.name + " | attrs=" + describeAttrs(c.attrs);
        for (size_t i = 0; i < c.inputs.size(); ++i)
          s += " | in" + std::to_string(i) + "=" + describeTensor(c.inputs[i]);
        s += " | tol=";
        if (c.tol.empty()) s += "harness";
        for (const Tolerance& t : c.tol) s += describeTolerance(t) + ",";
        std::printf("case| %s\n", s.c_str());
      }
    }
    EXPECT_GT(cuda_cases, 0u) << key << ": no case for a combination with a CUDA tactic";
  }
}

class GpuOp : public ::testing::TestWithParam<std::string> {};

// For every concrete combination, every CUDA tactic allowed with it, every case: the device result
// equals the CPU reference within the op's tolerance, aligned and misaligned, in place and not.
TEST_P(GpuOp, EveryCudaTacticMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  const std::string key = GetParam();
  const RegisteredOp* op = findOp(key);
  ASSERT_NE(op, nullptr) << key;
  std::mt19937_64 rng(std::hash<std::string>{}(key));
  int runs = 0, cuda_tactics = 0;
  for (const auto& t : op->schema().tactics) cuda_tactics += t.backend == Backend::kCuda;
  ASSERT_GT(cuda_tactics, 0) << key << " has no CUDA tactic";
  for (const ConcreteCombo& combo : combosOf(*op)) {
    SCOPED_TRACE("combination " + comboName(combo));
    // Combinations limited to the CPU reference (the FP64 ones the gradient checks use) have no
    // CUDA tactic to compare.
    const bool any_cuda =
        std::any_of(op->schema().tactics.begin(), op->schema().tactics.end(), [&](const auto& t) {
          return t.backend == Backend::kCuda &&
                 (combo.tactic_ids.empty() ||
                  std::find(combo.tactic_ids.begin(), combo.tactic_ids.end(), t.id) !=
                      combo.tactic_ids.end());
        });
    if (!any_cuda) continue;
    for (const GpuCase& c : caseTable().at(key)(combo, rng)) {
      SCOPED_TRACE("case " + c.name);
      auto ref = runKernel(*opsRegistry(), key, c.attrs, c.inputs, 0xff, 0);
      ASSERT_TRUE(ref.isOk()) << ref.status().message();
      for (const auto& t : op->schema().tactics) {
        if (t.backend != Backend::kCuda) continue;
        if (!combo.tactic_ids.empty() && std::find(combo.tactic_ids.begin(), combo.tactic_ids.end(),
                                                   t.id) == combo.tactic_ids.end())
          continue;
        for (int variant = 0; variant < 3; ++variant) {
          RunOptions opt;
          opt.misalign = variant == 1;
          opt.in_place = variant != 2;
          SCOPED_TRACE("tactic " + std::to_string(t.id) + " " + t.name +
                       (opt.misalign ? " misaligned" : "") + (opt.in_place ? "" : " out of place"));
          auto prep = prepare(*opsRegistry(), key, c.attrs, c.inputs, t.id, true);
          if (!prep) continue;  // the tactic does not apply to this case (its applies() says so)
          if (variant == 2 &&
              std::all_of(prep->alias.begin(), prep->alias.end(), [](int a) { return a < 0; }))
            continue;
          auto r = runOnDevice(*opsRegistry(), key, c.attrs, c.inputs, t.id, opt);
          ASSERT_TRUE(r.isOk()) << r.status().message();
          ASSERT_TRUE(r->status.isOk()) << r->status.message();
          ASSERT_EQ(r->outputs.size(), ref->outputs.size());
          for (size_t o = 0; o < ref->outputs.size(); ++o) {
            const Tolerance tol =
                o < c.tol.size() ? c.tol[o] : toleranceFor(ref->outputs[o].desc.dtype);
            EXPECT_TRUE(allClose(r->outputs[o], ref->outputs[o], tol)) << "output " << o;
          }
          ++runs;
        }
      }
    }
  }
  EXPECT_GT(runs, 0) << key << ": no CUDA tactic ran on any case";
}

// Every CUDA tactic, every case, inside a global-mode stream capture: a tactic that synchronizes
// (or calls anything else a capture forbids: cudaMemcpy, cudaMalloc, ...) invalidates the capture
// and fails here; the replayed graph must give the reference's result. (The built-in ops get the
// same through opforge_gpu_onnx_tests' captured variant.)
TEST_P(GpuOp, EveryCudaTacticRunsUnderStreamCapture) {
  SKIP_WITHOUT_GPU();
  const std::string key = GetParam();
  const RegisteredOp* op = findOp(key);
  ASSERT_NE(op, nullptr) << key;
  std::mt19937_64 rng(std::hash<std::string>{}(key) + 1);
  std::set<int32_t> captured;
  for (const ConcreteCombo& combo : combosOf(*op)) {
    SCOPED_TRACE("combination " + comboName(combo));
    for (const GpuCase& c : caseTable().at(key)(combo, rng)) {
      SCOPED_TRACE("case " + c.name);
      std::optional<OpRun> ref;
      for (const auto& t : op->schema().tactics) {
        if (t.backend != Backend::kCuda) continue;
        if (!combo.tactic_ids.empty() && std::find(combo.tactic_ids.begin(), combo.tactic_ids.end(),
                                                   t.id) == combo.tactic_ids.end())
          continue;
        if (!prepare(*opsRegistry(), key, c.attrs, c.inputs, t.id, true)) continue;
        SCOPED_TRACE("tactic " + std::to_string(t.id) + " " + t.name + " under capture");
        if (!ref) {
          auto k = runKernel(*opsRegistry(), key, c.attrs, c.inputs, 0xff, 0);
          ASSERT_TRUE(k.isOk()) << k.status().message();
          ref = std::move(*k);
        }
        RunOptions opt;
        opt.capture = true;
        opt.poison = 0x00;
        auto r = runOnDevice(*opsRegistry(), key, c.attrs, c.inputs, t.id, opt);
        ASSERT_TRUE(r.isOk()) << r.status().message();
        ASSERT_TRUE(r->status.isOk()) << r->status.message();
        ASSERT_EQ(r->outputs.size(), ref->outputs.size());
        for (size_t o = 0; o < r->outputs.size(); ++o) {
          const Tolerance tol =
              o < c.tol.size() ? c.tol[o] : toleranceFor(ref->outputs[o].desc.dtype);
          EXPECT_TRUE(allClose(r->outputs[o], ref->outputs[o], tol)) << "output " << o;
        }
        captured.insert(t.id);
      }
    }
  }
  EXPECT_FALSE(captured.empty()) << key << ": no CUDA tactic ran under capture";
}

INSTANTIATE_TEST_SUITE_P(Contrib, GpuOp, ::testing::ValuesIn(opKeys()), [](const auto& info) {
  std::string n = info.param;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// ---- Deformable aggregation: determinism, graph capture, run-time table checks ----------------

namespace {
std::vector<int32_t> cudaTactics(const std::string& key) {
  std::vector<int32_t> ids;
  for (const auto& t : findOp(key)->schema().tactics)
    if (t.backend == Backend::kCuda) ids.push_back(t.id);
  return ids;
}
DaProblem sparse4dLike(DataType t) {
  DaProblem p;
  p.A = 64, p.P = 13, p.Ncam = 6, p.C = 256, p.G = 8,
  p.levels = {{16, 44}, {8, 22}, {4, 11}, {2, 6}};
  p.feat_type = t;
  return p;
}
}  // namespace

TEST(GpuDeformableAggregation, BitIdenticalBetweenRuns) {
  SKIP_WITHOUT_GPU();
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    std::mt19937_64 rng(7);
    const auto in = makeDaInputs(sparse4dLike(t), rng);
    for (int32_t tactic : cudaTactics("opforge::DeformableAggregation")) {
      SCOPED_TRACE(dtypeName(t) + " tactic " + std::to_string(tactic));
      std::vector<std::vector<uint8_t>> results;
      for (uint8_t poison : {0xff, 0x00, 0x7f}) {
        RunOptions opt;
        opt.poison = poison;
        opt.repeat = 2;
        auto r = runOnDevice(*opsRegistry(), "opforge::DeformableAggregation", {}, in, tactic, opt);
        ASSERT_TRUE(r.isOk() && r->status.isOk())
            << (r.isOk() ? r->status.message() : r.status().message());
        results.push_back(r->outputs[0].data);
      }
      EXPECT_EQ(results[0], results[1]);
      EXPECT_EQ(results[0], results[2]);
    }
  }
  // The backward's location and weight gradients are gathers: bit-identical too.
  std::mt19937_64 rng(8);
  DaProblem p = sparse4dLike(DataType::kFloat32);
  p.A = 16;
  auto in = makeDaInputs(p, rng);
  in.push_back(randomTensor(DataType::kFloat32, {p.B, p.A, p.C}, rng, -1, 1));
  auto a = runOnDevice(*opsRegistry(), "opforge::DeformableAggregationGrad", {}, in, 1);
  auto b = runOnDevice(*opsRegistry(), "opforge::DeformableAggregationGrad", {}, in, 1);
  ASSERT_TRUE(a.isOk() && b.isOk() && a->status.isOk() && b->status.isOk());
  EXPECT_EQ(a->outputs[1].data, b->outputs[1].data);
  EXPECT_EQ(a->outputs[2].data, b->outputs[2].data);
}

TEST(GpuDeformableAggregation, GraphCaptureGivesTheEagerResult) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(9);
  const auto in = makeDaInputs(sparse4dLike(DataType::kFloat32), rng);
  for (int32_t tactic : cudaTactics("opforge::DeformableAggregation")) {
    RunOptions cap;
    cap.capture = true;
    auto e = runOnDevice(*opsRegistry(), "opforge::DeformableAggregation", {}, in, tactic);
    auto g = runOnDevice(*opsRegistry(), "opforge::DeformableAggregation", {}, in, tactic, cap);
    ASSERT_TRUE(e.isOk() && g.isOk()) << tactic;
    ASSERT_TRUE(e->status.isOk() && g->status.isOk()) << tactic;
    EXPECT_EQ(e->outputs[0].data, g->outputs[0].data) << "tactic " << tactic;
  }
}

namespace {
constexpr int32_t kKeep = INT32_MIN;

// Tables pointing outside F: the op reports OutOfRange, and the outputs are NaN (nothing read).
void expectTableError(const std::string& key, std::vector<TensorValue> in, int entry, int32_t start,
                      int32_t H) {
  auto* st = reinterpret_cast<int32_t*>(in[2].data.data());
  auto* hw = reinterpret_cast<int32_t*>(in[1].data.data());
  if (start != kKeep) st[entry] = start;
  if (H != kKeep) hw[2 * entry] = H;
  for (int32_t tactic : cudaTactics(key)) {
    SCOPED_TRACE(key + " tactic " + std::to_string(tactic));
    RunOptions opt;
    opt.constants_visible =
        false;  // as when the tables are network inputs: only the kernel can see them
    auto r = runOnDevice(*opsRegistry(), key, {}, in, tactic, opt);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    ASSERT_FALSE(r->status.isOk());
    EXPECT_EQ(r->status.code(), StatusCode::kOutOfRange) << r->status.message();
    EXPECT_NE(r->status.message().find("outside mc_ms_feat"), std::string::npos)
        << r->status.message();
    for (size_t o = 0; o < r->outputs.size(); ++o) {
      if (r->outputs[o].desc.numel() == 0 || !isFloatType(r->outputs[o].desc.dtype)) continue;
      EXPECT_TRUE(std::isnan(loadAsDouble(r->outputs[o].data.data(), r->outputs[o].desc.dtype, 0)))
          << "output " << o;
    }
    // The report travels through the device error record, so a captured graph's replay reports
    // the same error (the tactic never waits), with NaN outputs and nothing read.
    opt.capture = true;
    auto g = runOnDevice(*opsRegistry(), key, {}, in, tactic, opt);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    EXPECT_EQ(g->status.code(), StatusCode::kOutOfRange) << g->status.message();
    EXPECT_NE(g->status.message().find("outside mc_ms_feat"), std::string::npos)
        << g->status.message();
    for (size_t o = 0; o < g->outputs.size(); ++o)
      for (double v : toDoubles(g->outputs[o])) ASSERT_TRUE(std::isnan(v)) << "output " << o;
  }
}
}  // namespace

TEST(GpuDeformableAggregation, RunTimeTableChecksNeverReadOutside) {
  SKIP_WITHOUT_GPU();
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    std::mt19937_64 rng(10);
    DaProblem p;
    p.feat_type = t;
    const auto in = makeDaInputs(p, rng);
    auto grad_in = in;
    grad_in.push_back(randomTensor(t, {p.B, p.A, p.C}, rng, -1, 1));
    const int32_t F = static_cast<int32_t>(p.F());
    for (const std::string key :
         {"opforge::DeformableAggregation", "opforge::DeformableAggregationGrad"}) {
      const auto& base = key == "opforge::DeformableAggregation" ? in : grad_in;
      expectTableError(key, base, 3, F - 1, kKeep);    // a start near the end of F
      expectTableError(key, base, 0, 1 << 30, kKeep);  // far outside
      expectTableError(key, base, 2, -5, kKeep);       // negative start
      expectTableError(key, base, 1, kKeep, 1000);     // a level taller than its rows
    }
  }
}

TEST(GpuDeformableAggregation, PublicConformanceProbe312) {
  SKIP_WITHOUT_GPU();
  // Features all 1, every level 1x1, weights all 1, P = 13, Ncam = 6, L = 4, G = 8: points all at
  // (0.5, 0.5) give exactly 312 in every channel; all at 0, 1, -0.1, 1.1, NaN, +Inf or -Inf give 0.
  const std::vector<double> where = {0.5, 0.0, 1.0, -0.1, 1.1, NAN, INFINITY, -INFINITY};
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DaProblem p;
    p.A = static_cast<int64_t>(where.size()), p.P = 13, p.Ncam = 6, p.G = 8, p.C = 64;
    p.levels = {{1, 1}, {1, 1}, {1, 1}, {1, 1}};
    p.feat_type = t;
    std::mt19937_64 rng(1);
    auto in = makeDaInputs(p, rng);
    for (int64_t i = 0; i < in[0].desc.numel(); ++i) storeFromDouble(in[0].data.data(), t, i, 1.0);
    for (int64_t i = 0; i < in[4].desc.numel(); ++i)
      storeFromDouble(in[4].data.data(), DataType::kFloat32, i, 1.0);
    for (int64_t a = 0; a < p.A; ++a)
      for (int64_t i = 0; i < p.P * p.Ncam * 2; ++i)
        storeFromDouble(in[3].data.data(), DataType::kFloat32, a * p.P * p.Ncam * 2 + i, where[a]);
    for (int32_t tactic : cudaTactics("opforge::DeformableAggregation")) {
      auto r = runOnDevice(*opsRegistry(), "opforge::DeformableAggregation", {}, in, tactic);
      ASSERT_TRUE(r.isOk() && r->status.isOk())
          << (r.isOk() ? r->status.message() : r.status().message());
      const auto y = toDoubles(r->outputs[0]);
      for (int64_t a = 0; a < p.A; ++a)
        for (int64_t k = 0; k < p.C; ++k)
          ASSERT_EQ(y[a * p.C + k], a == 0 ? 312.0 : 0.0)
              << dtypeName(t) << " tactic " << tactic << " anchor " << a;
    }
  }
}
