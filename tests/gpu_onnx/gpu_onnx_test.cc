// opforge_gpu_onnx_tests (label gpu): every built-in op (ops/onnx, the fused ops of ops/core),
// every CUDA tactic and every data type it runs, on fresh random inputs (never zeros; seed printed,
// or OPFORGE_TEST_SEED), against the CPU reference (tactic 0). The cases live in each op's folder
// (ops/<lib>/<op>/<op>_cases.cc, registered with OPFORGE_BUILTIN_CASES; tests/op_cases.h describes
// them and holds the tolerance table). Each (case, type, tactic) runs three times: outputs and
// workspace poisoned with 0xff (NaN for floats); poisoned with 0x00 inside a CUDA graph capture (so
// the tactic is capture-safe and writes every element); and, for the elementwise and data-movement
// ops, with every tensor offset by one element (no 16-byte alignment: the scalar paths); ops with a
// channels-last combination also run channels-last. Then: coverage (every op with CUDA tactics has
// a case, every CUDA tactic ran), run-time index errors through the device error records, and a few
// engine-level builds (fusions, --fp16 lowering, CPU vs CUDA plans). The reference runs first on
// the host; a case whose reference itself fails is a test error, not a skip.
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
#include "op_cases.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;
using namespace opforge::test::cases;

namespace {

#define SKIP_WITHOUT_GPU()                                \
  do {                                                    \
    std::string why;                                      \
    if (!gpu::deviceAvailable(&why)) GTEST_SKIP() << why; \
  } while (0)

// Every case of every op folder (OPFORGE_BUILTIN_CASES), in file order.
std::vector<Case> allCases() {
  return builtinCases();
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

struct Coverage {
  std::set<std::string> ops;                         // ops with a case that ran
  std::map<std::string, std::set<int32_t>> tactics;  // CUDA tactics that ran and passed
  int hwc_runs = 0;                                  // channels-last runs that passed
};
Coverage& coverage() {
  static Coverage c;
  return c;
}

// Whether a combination with a channels-last position lets tactic `id` run.
bool hwcCombinationTakes(const OpSchema& s, int32_t id) {
  for (const auto& c : s.combos) {
    bool hwc = c.formats.find("HWC") != std::string::npos;
    for (const auto& [pos, f] : c.pos_formats) hwc = hwc || f.find("HWC") != std::string::npos;
    if (hwc && (c.tactic_ids.empty() ||
                std::find(c.tactic_ids.begin(), c.tactic_ids.end(), id) != c.tactic_ids.end()))
      return true;
  }
  return false;
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
      if (!r && r.status().code() == StatusCode::kUnsupported) {
        // The tactic does not apply here; one that takes only channels-last tensors is still
        // run channels-last.
        if (variants == 4 && variant < 3) {
          variant = 2;
          continue;
        }
        break;
      }
      const std::string where = label(c, t) + " tactic " + std::to_string(tac.id) + " " + tac.name +
                                (variant == 1   ? " (graph capture, 0x00 poison)"
                                 : variant == 2 ? " (unaligned)"
                                 : variant == 3 ? " (HWC)"
                                                : "");
      ASSERT_TRUE(r.isOk()) << where << ": " << r.status().message();
      // A tactic that needs the 16-byte alignment every plan gives its tensors (cuDNN's graph
      // engines) says so when run unaligned; the other variants still check it.
      if (variant == 2 && r->status.code() == StatusCode::kUnsupported) continue;
      ASSERT_TRUE(r->status.isOk()) << where << ": " << r->status.message();
      ASSERT_EQ(r->outputs.size(), ref->outputs.size()) << where;
      bool ok = true;
      for (size_t o = 0; o < ref->outputs.size(); ++o) {
        auto close = allClose(r->outputs[o], ref->outputs[o],
                              tacticTolerance(ref->outputs[o].desc.dtype, c.tol, tac.tf32));
        EXPECT_TRUE(close) << where << ", output " << o;
        ok = ok && close;
      }
      if (ok && (variant == 0 || variant == 3)) {
        coverage().tactics[key].insert(tac.id);
        any = true;
      }
      if (ok && variant == 3) {
        ++coverage().hwc_runs;
        // A tactic that runs channels-last but that no channels-last combination lists is one no
        // plan can choose (the cuBLASLt 1x1 convolutions were, when first added).
        EXPECT_TRUE(hwcCombinationTakes(op->schema(), tac.id))
            << where << ": no channels-last combination of the op lists the tactic";
      }
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

// Built-in ops with no case in this table, each tested where its inputs come from:
// opforge::Reformat is the builder's op (the engine tests), opforge::AotKernel runs kernels its
// attributes carry and has no CPU reference to compare with (GpuAotKernel.* with a hand-written PTX
// kernel, and the Python AOT tests).
// opforge::LoopLimit has no CUDA tactic on purpose (a CPU layer that only fails, guarded: its
// README); the loop tests run it through the engine.
static bool testedWithTheEngine(const std::string& key) {
  return key == "opforge::Reformat" || key == "opforge::AotKernel" || key == "opforge::LoopLimit";
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
      if (testedWithTheEngine(key)) continue;
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
    if (testedWithTheEngine(key)) continue;
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
    s += " " + dtypeName(t) + "=" + describeTolerance(scaledTolerance(t, c.tol));
  s += std::string(" | misalign=") + (c.misalign ? "1" : "0") +
       " hwc=" + (takesChannelsLast(op.schema()) ? "1" : "0");
  s += " | attrs=" + describeAttrs(c.attrs);
  for (size_t i = 0; i < c.in.size(); ++i)
    s += " | in" + std::to_string(i) + "=" + describeIn(c.in[i]);
  return s;
}

// opforge::Reformat's CUDA tactic (the tiled channels-last transposition, the narrow one for at
// most 8 channels, casts, copies) on every direction of layout and a spread of shapes — channel
// counts at and across the narrow limit and below, at and across the 32-wide tiles, spatial sizes
// of 1 and odd, ranks 3 to 5, an empty tensor — against its CPU reference (a plain cast, LINEAR in
// and out; the runner converts HWC tensors both ways). Exact.
TEST(GpuOnnx, ReformatTransposesAndCastsEveryShapeExactly) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed());
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 3, 5, 7}, {1, 64, 56, 56},  {3, 33, 17, 1}, {2, 130, 9, 11},
      {2, 40, 33},  {1, 19, 3, 4, 5}, {4, 3, 31, 33}, {1, 1, 70, 3},
      {0, 3, 4, 5}, {2, 256, 7, 7},   {2, 8, 5, 9},   {1, 9, 4, 4}};
  const std::vector<std::pair<DataType, DataType>> types = {{F32, F16}, {F16, F16}, {F16, F32},
                                                            {B16, F32}, {F32, F32}, {F32, B16},
                                                            {F64, F64}, {I8, I8},   {I64, I64}};
  const Format L = Format::kLinear, H = Format::kHWC;
  int runs = 0;
  for (const auto& dims : shapes)
    for (const auto& [from, to] : types) {
      TensorValue x = randomTensor(from, dims, rng);
      Attrs attrs{{"to_dtype", int64_t{from == to ? 0 : static_cast<int64_t>(to)}}};
      auto ref = runKernel(*builtins(), "opforge::Reformat", attrs, {x}, 0xff, 0);
      ASSERT_TRUE(ref.isOk()) << ref.status().message();
      for (const auto& [fi, fo] :
           std::vector<std::pair<Format, Format>>{{L, H}, {H, L}, {H, H}, {L, L}}) {
        gpu::RunOptions opt;
        opt.in_formats = {fi};
        opt.out_formats = {fo};
        auto r = gpu::runOnDevice(*builtins(), "opforge::Reformat", attrs, {x}, 1, opt);
        const std::string where = describeTensor(x) + " -> " + dtypeName(to) + ", " +
                                  formatName(fi) + " -> " + formatName(fo);
        ASSERT_TRUE(r.isOk()) << where << ": " << r.status().message();
        ASSERT_TRUE(r->status.isOk()) << where << ": " << r->status.message();
        EXPECT_TRUE(allClose(r->outputs[0], ref->outputs[0], exact())) << where;
        ++runs;
      }
    }
  EXPECT_EQ(runs, 12 * 9 * 4);
}

// ai.onnx::Transpose's CUDA tactics (cuda.permute; cuda.view where the bytes stay) with the input
// and the output each LINEAR or channels-last, every permutation of rank 4 and some of ranks 3 and
// 5, against the CPU reference (LINEAR in and out; the runner converts HWC tensors both ways).
// Exact. The view must apply to (0, 2, 3, 1) HWC -> LINEAR and (0, 3, 1, 2) LINEAR -> HWC.
TEST(GpuOnnx, TransposeInEveryFormatPairMatchesTheReferenceExactly) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed());
  const Format L = Format::kLinear, H = Format::kHWC;
  int runs = 0, views = 0;
  for (const auto& dims :
       std::vector<std::vector<int64_t>>{{2, 3, 5}, {2, 37, 9, 33}, {1, 3, 2, 4, 5}})
    for (DataType t : {F32, F16}) {
      TensorValue x = randomTensor(t, dims, rng);
      std::vector<int64_t> perm(dims.size());
      std::iota(perm.begin(), perm.end(), 0);
      do {
        Attrs attrs{{"perm", perm}};
        auto ref = runKernel(*builtins(), "ai.onnx::Transpose", attrs, {x}, 0xff, 0);
        ASSERT_TRUE(ref.isOk()) << ref.status().message();
        for (const auto& [fi, fo] :
             std::vector<std::pair<Format, Format>>{{L, H}, {H, L}, {H, H}, {L, L}})
          for (int32_t tactic : {1, 2}) {
            gpu::RunOptions opt;
            opt.in_formats = {fi};
            opt.out_formats = {fo};
            auto r = gpu::runOnDevice(*builtins(), "ai.onnx::Transpose", attrs, {x}, tactic, opt);
            const std::string where = describeTensor(x) + " perm " +
                                      ::testing::PrintToString(perm) + " " + formatName(fi) +
                                      " -> " + formatName(fo) + " tactic " + std::to_string(tactic);
            if (tactic == 2 && !r && r.status().code() == StatusCode::kUnsupported) {
              const bool must = dims.size() == 4 &&
                                ((fi == H && fo == L && perm == std::vector<int64_t>{0, 2, 3, 1}) ||
                                 (fi == L && fo == H && perm == std::vector<int64_t>{0, 3, 1, 2}));
              EXPECT_FALSE(must) << where << ": the view does not apply";
              continue;
            }
            ASSERT_TRUE(r.isOk()) << where << ": " << r.status().message();
            ASSERT_TRUE(r->status.isOk()) << where << ": " << r->status.message();
            EXPECT_TRUE(allClose(r->outputs[0], ref->outputs[0], exact())) << where;
            ++runs;
            views += tactic == 2;
          }
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  EXPECT_GE(views, 2 * 2);
  EXPECT_GT(runs, 2 * 4 * (6 + 24 + 120));
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
    if (testedWithTheEngine(op->key())) continue;
    EXPECT_TRUE(with_case.count(op->key()))
        << op->key() << " has no GPU case (ops/<lib>/<op>/<op>_cases.cc)";
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

// RoiAlign's adaptive sample count comes from the data; the CUDA tactic keeps the reference's
// bounds (at most 2^20 samples per bin, no NaN region): such a region is reported and its bins
// read 0 (kind kDeviceErrorLimit), where a loop of 1e30 samples would hang the device. Both axes
// are checked on their own (0 x 1e30 samples passed a bound on the product alone).
TEST(GpuOnnx, RoiAlignRegionsTheReferenceRefusesAreReportedNotLoopedOver) {
  SKIP_WITHOUT_GPU();
  const TensorValue x = fromFloats({1, 1, 4, 4}, std::vector<float>(16, 1.f));
  const Attrs attrs{{"coordinate_transformation_mode", std::string("half_pixel")},
                    {"output_height", int64_t{2}},
                    {"output_width", int64_t{2}}};
  const std::vector<std::vector<float>> regions = {
      {0, 0, 1e30f, 1e30f}, {0, 0, 1e30f, -1e30f}, {0, 0, std::nanf(""), 2}};
  const RegisteredOp* op = builtins()->find("ai.onnx::RoiAlign");
  ASSERT_NE(op, nullptr);
  for (const auto& roi : regions)
    for (const auto& tac : op->schema().tactics) {
      if (tac.backend != Backend::kCuda) continue;
      // Region 1 is the bad one; region 0 is an ordinary region that must still be computed.
      std::vector<float> rois = {0, 0, 2, 2};
      rois.insert(rois.end(), roi.begin(), roi.end());
      auto r = gpu::runOnDevice(*builtins(), "ai.onnx::RoiAlign", attrs,
                                {x, fromFloats({2, 4}, rois), fromInt64s({2}, {0, 0})}, tac.id);
      ASSERT_TRUE(r.isOk()) << "tactic " << tac.id << ": " << r.status().message();
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(r->record.flag, 1u) << "tactic " << tac.id << " did not report region 1";
      EXPECT_EQ(r->record.kind, kDeviceErrorLimit);
      EXPECT_EQ(r->record.input, 1);
      EXPECT_EQ(r->record.position, 4);
      EXPECT_EQ(r->record.extent, int64_t{1} << 20);  // the limit on samples per bin
      EXPECT_FALSE(r->status.isOk());
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
