// BuilderConfig::layer_tactics (`opforge exec --layerTactics`) and the op harness's
// checkOpTactics, which pins every tactic of an op in a plan of its own and compares it with the
// CPU reference: a wrong tactic fails the check, one that does not apply is listed, and bad
// entries are build errors that name the layer, the entry and the op's tactics.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

constexpr int32_t kCpuTactic = 1 << 30;  // ids from 1 << 30 up are further CPU tactics

// y = x * 2 (FP32): the reference, a second CPU tactic that is right, and a third that is wrong
// (x * 2 + 1) and applies only from 5 elements on.
std::shared_ptr<Registry> doublerRegistry() {
  static auto reg = [] {
    auto r = Registry::create();
    auto times2 = [](float add) {
      return [add](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
        for (int64_t i = 0; i < in[0].numel(); ++i)
          static_cast<float*>(out[0].data)[i] = static_cast<const float*>(in[0].data)[i] * 2 + add;
        return Status::ok();
      };
    };
    OpDef d("test::doubler");
    d.input("x")
        .output("y")
        .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
        .combos("FP32, FP32")
        .cpu(times2(0))
        .tactic(kCpuTactic, "cpu.right", times2(0))
        .tactic(kCpuTactic + 1, "cpu.wrong", times2(1),
                [](const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
                  return in[0].numel() >= 5;
                });
    // An op with a CUDA tactic (never run here: only CPU plans pin it, and are refused).
    OpDef c("test::gpu_only");
    c.input("x")
        .output("y")
        .shape([](ShapeContext& ctx) -> Result<SymDesc> { return ctx.input(0).like(); })
        .combos("FP32, FP32")
        .cpu(times2(0))
        .tactic(1, "cuda.never", times2(0));
    std::vector<OpDef> defs;
    defs.push_back(std::move(d));
    defs.push_back(std::move(c));
    EXPECT_TRUE(r->addOps("test:doubler", std::move(defs)).isOk());
    return r;
  }();
  return reg;
}

}  // namespace

TEST(LayerTactics, CheckOpTacticsRunsEachTacticAndCatchesAWrongOne) {
  auto reg = doublerRegistry();
  // Three elements: cpu.wrong does not apply, the other two match the reference.
  auto small = checkOpTactics(reg, "test::doubler", {}, {fromFloats({3}, {1, -2, 3})});
  EXPECT_EQ(small.checked,
            (std::vector<std::string>{"cpu 0 reference", "cpu 1073741824 cpu.right"}));
  EXPECT_EQ(small.not_applicable, (std::vector<std::string>{"cpu 1073741825 cpu.wrong"}));
  // Six elements: cpu.wrong runs, and the check fails naming it.
  const TensorValue big = fromFloats({6}, {1, 2, 3, 4, 5, 6});
  EXPECT_NONFATAL_FAILURE(checkOpTactics(reg, "test::doubler", {}, {big}),
                          "cpu 1073741825 cpu.wrong");
}

TEST(LayerTactics, APinnedTacticIsTheOneThatRuns) {
  auto reg = doublerRegistry();
  const TensorValue x = fromFloats({6}, {1, 2, 3, 4, 5, 6});
  BuilderConfig cfg;
  cfg.layer_tactics = {"doubler=cpu.wrong"};  // by the op's name
  auto r = runEngineWith(reg, "test::doubler", {}, {x}, cfg);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{3, 5, 7, 9, 11, 13}));
  cfg.layer_tactics = {"no*=cpu.wrong", "node=1073741824"};  // the first match counts
  auto g = runEngineWith(reg, "test::doubler", {}, {x}, cfg);
  ASSERT_FALSE(g.isOk());  // "no*" matches the layer "node": cpu.wrong, and "node=..." matches none
  expectError(g.status(), {"layer_tactics 'node=1073741824' matches no layer"});
  cfg.layer_tactics = {"node=1073741824"};
  auto right = runEngineWith(reg, "test::doubler", {}, {x}, cfg);
  ASSERT_TRUE(right.isOk()) << right.status().message();
  EXPECT_EQ(toDoubles(right->outputs[0]), (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

TEST(LayerTactics, BadEntriesNameTheLayerTheEntryAndTheTactics) {
  auto reg = doublerRegistry();
  const TensorValue x = fromFloats({3}, {1, 2, 3});
  auto build = [&](const char* key, std::vector<std::string> pins) {
    BuilderConfig cfg;
    cfg.layer_tactics = std::move(pins);
    return runEngineWith(reg, key, {}, {x}, cfg).status();
  };
  expectError(build("test::gpu_only", {"node=cuda.never"}),
              {"node", "test::gpu_only", "layer_tactics 'node=cuda.never'",
               "tactic 1 cuda.never is a CUDA tactic and this build is for the CPU"});
  expectError(build("test::doubler", {"test::doubler=fastest"}),
              {"the op has no tactic 'fastest'",
               "its tactics: 0 reference, 1073741824 cpu.right, 1073741825 cpu.wrong"});
  expectError(build("test::doubler", {"other=reference"}),
              {"layer_tactics 'other=reference' matches no layer"});
  expectError(build("test::doubler", {"node"}), {"layer_tactics: 'node' is not PATTERN=TACTIC"});
  EXPECT_TRUE(build("test::doubler", {"doubler=cpu.reference"}).isOk());
  // Through the harness, a built-in op: the reference, and on a GPU machine every CUDA tactic
  // (checked, or listed as not applying to these FP32 inputs).
  auto builtin = Registry::create();
  std::mt19937_64 rng(3);
  const std::vector<TensorValue> qkv = {randomTensor(DataType::kFloat32, {2, 5, 8}, rng),
                                        randomTensor(DataType::kFloat32, {2, 6, 8}, rng),
                                        randomTensor(DataType::kFloat32, {2, 6, 8}, rng)};
  auto r = checkOpTactics(builtin, "opforge::FusedAttention", {{"scale", 0.3}}, qkv);
  size_t cpu = 1, cuda = 0;  // the reference, then cpu.sgemm and the CUDA tactics
  for (const auto& t : builtin->find("opforge::FusedAttention")->schema().tactics) {
    cuda += t.backend == Backend::kCuda;
    cpu += t.backend == Backend::kCpu && t.id != 0;
  }
  ASSERT_FALSE(r.checked.empty());
  EXPECT_EQ(r.checked.front(), "cpu 0 reference");
  EXPECT_GE(cpu, 2u);
  EXPECT_EQ(r.checked.size() + r.not_applicable.size(), cpu + (r.gpu ? cuda : 0));
}
