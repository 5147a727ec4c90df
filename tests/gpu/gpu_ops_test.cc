// opforge_gpu_tests: every CUDA tactic of every contrib op, for every type combination it is
// allowed with, on fresh random inputs (never zeros), with outputs and workspace poisoned (0xff:
// NaN for floats, -1 for integers), compared with the CPU reference (tactic 0) — aligned and with
// every tensor offset by one element (not 16-byte aligned) — plus determinism, in-place aliasing,
// CUDA graph capture and the run-time table checks of deformable aggregation.
//
// Tolerances, |got - want| <= atol + rtol * |want| (NaN only against NaN):
//   data movement (circ_pad, non_zero)       exact
//   elemwise_add_inplace                     the harness's: FP32 1e-5/1e-5, FP16 1e-3/1e-3 + 1 ulp
//   FusedGelu, FusedGeluGrad, circ_pad_grad  FP64 1e-12/1e-12, FP32 1e-5/1e-5, FP16 1e-3/1e-3 + 1
//   ulp,
//                                            BF16 1e-2/1e-2
//   DeformableAggregation(Grad)              FP32 5e-5/1e-4, FP16 2e-3/2e-3 + 1 ulp,
//   BF16 1.5e-2/1.5e-2
//                                            (fp32 sums of up to 312 weighted bilinear samples; the
//                                            fp32 locations round x = u*W - 0.5 differently from
//                                            the float64 reference); location gradients, which
//                                            scale with H and W, 2e-4/1e-3.
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
#include "op_harness.h"
#include "ops/contrib/deformable_aggregation/da_problem.h"

using namespace opforge;
using namespace opforge::test;
using namespace opforge::gpu;

namespace {

#define SKIP_WITHOUT_GPU()                                            \
  do {                                                                \
    std::string why;                                                  \
    if (!deviceAvailable(&why)) GTEST_SKIP() << why;                  \
    ASSERT_TRUE(opsRegistry()) << "cannot load " << opsLibraryPath(); \
  } while (0)

struct GpuCase {
  std::string name;
  Attrs attrs;
  std::vector<TensorValue> inputs;
  std::vector<Tolerance> tol;  // per output; empty: the harness's per-dtype tolerance
};

Tolerance exact() {
  return {0, 0};
}
Tolerance daTol(DataType t) {
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

using CaseFn = std::function<std::vector<GpuCase>(const ConcreteCombo&, std::mt19937_64&)>;

// ---- circ_pad and its gradient ----------------------------------------------------------------
struct PadShape {
  std::vector<int64_t> dims;
  std::vector<int32_t> pads;
};
const std::vector<PadShape> kPadShapes = {
    {{2, 3, 5, 7}, {1, 2, 0, 3}},
    {{1, 1, 6}, {2, 2}},
    {{3, 4, 256}, {2, 2, 2, 2}},
    {{2, 5, 33}, {3, 1}},
    {{7}, {9, 4}},
    {{0, 3, 4}, {1, 1}},
    {{2, 1, 3, 2, 5}, {1, 0, 0, 2, 1, 1}},
    {{4, 260}, {0, 0, 5, 4}},
    {{2, 2, 130}, {8, 8}},
    // output rows of whole 16-byte vectors in FP32 and FP16 (the vector tactics), borders wrapping
    // more than once
    {{2, 3, 12}, {2, 2}},
    {{2, 5, 20}, {7, 5}},
    {{3, 6}, {9, 9}},
    {{2, 3, 7, 40}, {1, 2, 3, 5}},
    // enough rows that tactic 3's one-wave grid goes round several times
    {{1400, 64, 64}, {1, 1, 4, 4}},
    // rows of many vectors: a warp's rounds with a few lanes left over (1026 / 513 vectors), full
    // rounds (256 / 128)
    {{3, 2, 4096}, {4, 4}},
    {{2, 2, 1020}, {2, 2}},
    // many short rows: fewer vectors than lanes (FP32 16) or one round and two more (34)
    {{2, 40, 60}, {2, 2}},
    {{70, 130}, {3, 3}},
    // an odd number of rows: tactic 7's last pair of rows is one row
    {{5, 3, 64}, {4, 4}},
};

std::vector<GpuCase> circPadCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& s : kPadShapes)
    out.push_back({"x" + dimsToString(s.dims),
                   {{"pads", s.pads}},
                   {randomTensor(c.types[0], s.dims, rng, -3, 3)},
                   {exact()}});
  return out;
}

std::vector<GpuCase> circPadGradCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& s : kPadShapes) {
    std::vector<int64_t> dy = s.dims;
    for (size_t i = 0; i < s.pads.size() / 2; ++i)
      dy[dy.size() - 1 - i] += s.pads[2 * i] + s.pads[2 * i + 1];
    out.push_back({"dy" + dimsToString(dy),
                   {{"pads", s.pads}},
                   {randomTensor(c.types[0], dy, rng, -1, 1)},
                   {}});
  }
  return out;
}

// ---- non_zero ---------------------------------------------------------------------------------
std::vector<GpuCase> nonZeroCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (auto dims :
       std::vector<std::vector<int64_t>>{{37, 61}, {1, 1}, {0, 5}, {64, 1000}, {3, 4097}}) {
    for (double zeros : {0.5, 0.0, 0.97}) {
      TensorValue x = randomTensor(c.types[0], dims, rng, -3, 3);
      std::uniform_real_distribution<double> u(0, 1);
      for (int64_t i = 0; i < x.desc.numel(); ++i) {
        if (u(rng) < zeros)
          storeFromDouble(x.data.data(), x.desc.dtype, i, 0.0);
        else if (x.desc.dtype != DataType::kBool &&
                 loadAsDouble(x.data.data(), x.desc.dtype, i) == 0)
          storeFromDouble(x.data.data(), x.desc.dtype, i, 1.0);
        else if (x.desc.dtype == DataType::kBool)
          storeFromDouble(x.data.data(), x.desc.dtype, i, 1.0);
      }
      if (isFloatType(x.desc.dtype) && x.desc.numel() > 2)
        storeFromDouble(x.data.data(), x.desc.dtype, 1, NAN);
      out.push_back({"x" + dimsToString(dims) + " zeros " + std::to_string(zeros),
                     {},
                     {x},
                     {exact(), exact()}});
    }
  }
  return out;
}

// ---- elemwise_add_inplace ---------------------------------------------------------------------
std::vector<GpuCase> addCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (int64_t n : {1, 3, 4, 8, 1000, 4096 + 7, 100003})
    for (int64_t delta : {-3, 7})
      out.push_back({"n " + std::to_string(n) + " delta " + std::to_string(delta),
                     {{"delta", delta}},
                     {randomTensor(c.types[0], {n}, rng, -50, 50)},
                     {}});
  out.push_back({"x 2x3x5x7",
                 {{"delta", int64_t{2}}},
                 {randomTensor(c.types[0], {2, 3, 5, 7}, rng, -5, 5)},
                 {}});
  return out;
}

// ---- FusedGelu and its gradient ---------------------------------------------------------------
struct GeluAttrs {
  const char* name;
  Attrs attrs;
};
const std::vector<GeluAttrs> kGeluAttrs = {
    {"erf", {}},
    {"tanh", {{"approximate", std::string("tanh")}}},
    {"gelu(gelu)", {{"chain", std::vector<int32_t>{1}}}},
    {"every stage",
     {{"approximate", std::string("tanh")},
      {"chain", std::vector<int32_t>{2, 3, 6, 7, 4, 1, 5, 8}},
      {"chain_scalars", std::vector<float>{0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f}}}},
};

std::vector<GpuCase> geluCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& a : kGeluAttrs)
    for (int64_t n : {1, 5, 1023, 4096 + 7, 65536})
      out.push_back({std::string(a.name) + " n " + std::to_string(n),
                     a.attrs,
                     {randomTensor(c.types[0], {n}, rng, -6, 6)},
                     {}});
  return out;
}

std::vector<GpuCase> geluGradCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& a : kGeluAttrs)
    for (int64_t n : {1, 7, 1023, 4096 + 5})
      out.push_back(
          {std::string(a.name) + " n " + std::to_string(n),
           a.attrs,
           {randomTensor(c.types[0], {n}, rng, -4, 4), randomTensor(c.types[1], {n}, rng, -1, 1)},
           {}});
  return out;
}

// ---- DeformableAggregation and its gradient ---------------------------------------------------
std::vector<DaProblem> daProblems(DataType t) {
  std::vector<DaProblem> ps;
  auto add = [&](DaProblem p) {
    p.feat_type = t;
    ps.push_back(p);
  };
  DaProblem p;
  add(p);           // small, mixed valid/masked points with NaN/Inf
  p = DaProblem{};  // Sparse4D-like channels (C/G = 32) and > 256 samples per anchor (several
                    // rounds)
  p.A = 37, p.P = 13, p.Ncam = 6, p.C = 256, p.G = 8, p.levels = {{8, 22}, {4, 11}, {2, 6}, {1, 3}};
  add(p);
  p = DaProblem{};  // C/G = 3: one channel per vector
  p.C = 6, p.G = 2, p.A = 9;
  add(p);
  p = DaProblem{};  // C/G = 4, B = 2, all points valid
  p.B = 2, p.C = 12, p.G = 3, p.valid = 1.0;
  add(p);
  p = DaProblem{};  // wide: more channel vectors than threads in a block
  p.A = 3, p.P = 2, p.C = 4096, p.G = 2, p.valid = 0.9;
  add(p);
  p = DaProblem{};  // few valid points
  p.A = 16, p.P = 5, p.Ncam = 3, p.C = 64, p.G = 4, p.valid = 0.1;
  add(p);
  return ps;
}

std::string daName(const DaProblem& p) {
  return "B" + std::to_string(p.B) + " A" + std::to_string(p.A) + " P" + std::to_string(p.P) +
         " Ncam" + std::to_string(p.Ncam) + " C" + std::to_string(p.C) + " G" +
         std::to_string(p.G) + " valid " + std::to_string(p.valid);
}

std::vector<GpuCase> daCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& p : daProblems(c.types[0]))
    out.push_back({daName(p), {}, makeDaInputs(p, rng), {daTol(c.types[0])}});
  return out;
}

std::vector<GpuCase> daGradCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (auto p : daProblems(c.types[0])) {
    if (p.C > 256) continue;  // the float64 reference gradient of the wide case is slow on the host
    auto in = makeDaInputs(p, rng);
    in.push_back(randomTensor(c.types[0], {p.B, p.A, p.C}, rng, -1, 1));
    out.push_back(
        {daName(p), {}, in, {daTol(c.types[0]), {2e-4, 1e-3}, daTol(DataType::kFloat32)}});
  }
  return out;
}

// Every op of the contrib library and its cases. A new op must be added here (checked below).
const std::map<std::string, CaseFn>& caseTable() {
  static const std::map<std::string, CaseFn> t = {
      {"example::circ_pad_plugin", circPadCases},
      {"example::circ_pad_plugin_grad", circPadGradCases},
      {"example::non_zero_plugin", nonZeroCases},
      {"sample::elemwise_add_plugin_", addCases},
      {"opforge::FusedGelu", geluCases},
      {"opforge::FusedGeluGrad", geluGradCases},
      {"opforge::DeformableAggregation", daCases},
      {"opforge::DeformableAggregationGrad", daGradCases},
  };
  return t;
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
  EXPECT_EQ(lib, table) << "every op of libopforge_ops.so needs cases in tests/gpu/gpu_ops_test.cc";
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
  EXPECT_EQ(lib, table) << "every op of libopforge_ops.so needs GPU cases, and only those";
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
