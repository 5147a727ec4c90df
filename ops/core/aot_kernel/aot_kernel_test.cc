// opforge::AotKernel without a GPU (label cpu): its attributes parsed and checked against the
// image (a hand-written PTX module), the shape rule on symbolic inputs, node replacement, a CPU
// plan that holds the layer (serialized, loaded, inspected) and the clear error when it is run
// there.
#include <gtest/gtest.h>

#include <algorithm>

#include "aot_kernel_testing.h"
#include "op_harness.h"
#include "opforge/builder.h"
#include "opforge/network_edit.h"
#include "opforge/runtime.h"

using namespace opforge;
namespace aot = opforge::ops::aot;
using aot::testing::aotAttrs;
using aot::testing::kLaunches;
using aot::testing::kPtx;

namespace {

std::span<const uint8_t> spanOf(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// x FP32 [-1, 8] -> AotKernel -> y.
Result<std::vector<TensorRef>> addAot(NetworkDefinition& net, const Attrs& attrs) {
  auto x = net.findTensor("x");
  if (!x) x = net.addInput("x", DataType::kFloat32, {-1, 8});
  return net.addOp("opforge::AotKernel", {*x}, attrs, "aot");
}

std::string refusal(const Attrs& attrs) {
  NetworkDefinition net(Registry::global());
  auto r = addAot(net, attrs);
  return r ? std::string("accepted") : r.status().message();
}

}  // namespace

TEST(DimExprText, RoundTripsWhatToStringWrites) {
  const DimExpr x = DimExpr::symbol("x.0"), y = DimExpr::symbol("in1.2");
  for (const DimExpr& e :
       {x * 2 + 4, floorDiv(x, 2), ceilDiv(x * y, DimExpr(256)), min(x, y) - (y + 3),
        max(x - y, DimExpr(1)) * (y + 1), DimExpr(-7), x * -3}) {
    auto p = parseDimExpr(e.toString());
    ASSERT_TRUE(p.isOk()) << e.toString() << ": " << p.status().message();
    for (int64_t a : {1, 5, 300})
      for (int64_t b : {2, 9}) {
        auto look = [&](const std::string& s) -> std::optional<int64_t> {
          return s == "x.0" ? a : b;
        };
        EXPECT_EQ(*e.eval(look), *p->eval(look)) << e.toString();
      }
  }
  EXPECT_EQ(parseDimExpr(" ceildiv( in0.0 * 8 , 128 ) ")->toString(), "ceildiv(in0.0*8,128)");
  for (const char* bad : {"(a", "a+", "3 4", "min(a)", "-a", ""})
    EXPECT_FALSE(parseDimExpr(bad).isOk()) << bad;
  EXPECT_NE(
      parseDimExpr("a+").status().message().find("\"a+\": an operand is missing at position 2"),
      std::string::npos);
}

TEST(AotKernel, ReadsParametersAndBlockSizeFromPtx) {
  auto info = aot::inspectImage(spanOf(kPtx));
  ASSERT_TRUE(info.isOk()) << info.status().message();
  EXPECT_FALSE(info->cubin);
  EXPECT_EQ(info->sm, 90);
  auto k = aot::kernelInfo(spanOf(kPtx), "scale");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  using P = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(k->params, (P{{0, 8}, {8, 4}, {12, 4}, {16, 8}}));
  ASSERT_TRUE(k->reqntid.has_value());
  EXPECT_EQ(*k->reqntid, (std::vector<int64_t>{128, 1, 1}));
  auto r = aot::kernelInfo(spanOf(kPtx), "add_rows");
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->params, (P{{0, 8}, {8, 8}, {16, 8}}));
  EXPECT_FALSE(r->reqntid.has_value());
  EXPECT_EQ(aot::kernelInfo(spanOf(kPtx), "scal").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(aot::inspectImage(spanOf("hello")).isOk());
  std::string elf(64, '\0');
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2, elf[5] = 1, elf[18] = 62;
  auto x86 = aot::inspectImage(spanOf(elf));
  ASSERT_FALSE(x86.isOk());
  EXPECT_NE(x86.status().message().find("machine 62, not CUDA"), std::string::npos);
}

TEST(AotKernel, ShapeRuleSubstitutesTheNodesDimensions) {
  NetworkDefinition net(Registry::global());
  auto y = addAot(net, aotAttrs());
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(net.shapeOf((*y)[0]), "[x.0, 8]");
  EXPECT_EQ(net.dtypeOf((*y)[0]), DataType::kFloat32);
  // Outputs may be any expression of the inputs' dims, and alias an input.
  NetworkDefinition net2(Registry::global());
  auto z = addAot(net2, aotAttrs(kPtx, kLaunches, "FP32[in0.0*2+1, floordiv(in0.1,2)]\nINT64[]"));
  ASSERT_TRUE(z.isOk()) << z.status().message();
  ASSERT_EQ(z->size(), 2u);
  EXPECT_EQ(net2.shapeOf((*z)[0]), "[x.0*2+1, 4]");
  EXPECT_EQ(net2.shapeOf((*z)[1]), "[]");
  // The inputs must be what the kernels were made for.
  NetworkDefinition net3(Registry::global());
  auto x3 = *net3.addInput("x", DataType::kFloat16, {-1, 8});
  auto bad = net3.addOp("opforge::AotKernel", {x3}, aotAttrs(), "aot");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(
      bad.status().message().find("input 0 is FP16 [x.0, 8]; the kernels (op test::scale_rows) "
                                  "were made for FP32 of rank 2"),
      std::string::npos)
      << bad.status().message();
}

TEST(AotKernel, RefusesAttributesThatDisagreeWithTheImage) {
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  // Too few arguments for `scale` (it takes 4).
  std::string m = refusal(aotAttrs(
      kPtx, "kernel=scale; image=0; grid=1, 1, 1; block=128, 1, 1; shared=0; args=in0, out0"));
  EXPECT_TRUE(has(m,
                  "launch 0 (kernel 'scale'): the kernel takes 4 parameters; the launch passes "
                  "2 (in0, out0)"))
      << m;
  // An i64 where the kernel takes an i32.
  m = refusal(aotAttrs(kPtx,
                       "kernel=scale; image=0; grid=1, 1, 1; block=128, 1, 1; shared=0; "
                       "args=in0, i64:8, f32:1, out0"));
  EXPECT_TRUE(has(m,
                  "argument 1 (\"i64:8\") is 8 bytes at offset 8; the kernel's parameter 1 is 4 "
                  "bytes at offset 8"))
      << m;
  // A block the kernel does not allow (.reqntid 128).
  m = refusal(aotAttrs(kPtx,
                       "kernel=scale; image=0; grid=1, 1, 1; block=256, 1, 1; shared=0; "
                       "args=in0, i32:8, f32:1, out0"));
  EXPECT_TRUE(has(m, "block is (256, 1, 1) but the kernel requires (128, 1, 1)")) << m;
  // A kernel the image does not have.
  m = refusal(aotAttrs(kPtx, "kernel=nope; image=0; grid=1, 1, 1; block=1, 1, 1; args="));
  EXPECT_TRUE(has(m, "the PTX has no kernel (.entry) named 'nope'")) << m;
  // PTX for a newer GPU than 'arch'.
  std::string sm100 = kPtx;
  sm100.replace(sm100.find("sm_90"), 5, "sm_100");
  m = refusal(aotAttrs(sm100));
  EXPECT_TRUE(has(m, "image 0 is PTX for sm_100, but attribute 'arch' says sm_90")) << m;
  // A symbol that is not a dimension of an input; a bad expression; a bad output line.
  m = refusal(aotAttrs(kPtx, kLaunches, "FP32[x.0, 8]"));
  EXPECT_TRUE(has(m, "symbol 'x.0' is not in<k>.<d>")) << m;
  m = refusal(aotAttrs(kPtx, kLaunches, "FP32[in0.2, 8]"));
  EXPECT_TRUE(has(m, "symbol 'in0.2' is not in<k>.<d>")) << m;
  m = refusal(aotAttrs(kPtx, "kernel=scale; grid=ceildiv(in0.0,; block=128, 1, 1"));
  EXPECT_TRUE(has(m, "attribute 'launches': launch 0")) << m;
  m = refusal(aotAttrs(kPtx, kLaunches, "FLOAT7[in0.0]"));
  EXPECT_TRUE(has(m, "attribute 'outputs': output 0 (\"FLOAT7[in0.0]\"): unknown dtype")) << m;
  m = refusal(aotAttrs(kPtx, "kernel=scale; image=0; grid=1,1,1; block=128,1,1; args=in0, out3"));
  EXPECT_TRUE(has(m, "argument \"out3\": the node has 1 outputs")) << m;
  // An image that is not the one hashed.
  Attrs tampered = aotAttrs();
  std::get<Bytes>(tampered["images"]).data[3] ^= 1;
  m = refusal(tampered);
  EXPECT_TRUE(has(m, "is not the FNV-1a hash of 'images'")) << m;
}

TEST(AotKernel, ReplacesANodeInPlace) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 8});
  auto r = *net.addOp("ai.onnx::Relu", {x}, {}, "relu");
  auto n = *net.addOp("ai.onnx::Neg", {r[0]}, {}, "neg");
  ASSERT_TRUE(net.markOutput(n[0], "y").isOk());
  NetworkDefinition copy = cloneNetwork(net);
  ASSERT_TRUE(replaceNode(copy, 0, "opforge::AotKernel", aotAttrs()).isOk());
  auto info = *networkNode(copy, 0);
  EXPECT_EQ(info.op, "opforge::AotKernel");
  EXPECT_EQ(info.name, "relu");
  EXPECT_EQ(info.outputs[0].id, r[0].id);  // the same tensor, still read by 'neg'
  EXPECT_EQ(networkNode(copy, 1)->inputs[0].id, r[0].id);
  EXPECT_EQ(networkNode(net, 0)->op, "ai.onnx::Relu");  // the original is untouched
  // A replacement giving other outputs is refused and changes nothing.
  Status st = replaceNode(copy, 1, "opforge::AotKernel", aotAttrs(kPtx, kLaunches, "FP32[in0.0]"));
  EXPECT_NE(st.message().find("output 0 ('y') is FP32[x.0, 8]; the new op gives FP32[x.0]"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(networkNode(copy, 1)->op, "ai.onnx::Neg");
  EXPECT_EQ(replaceNode(copy, 7, "ai.onnx::Relu", {}).code(), StatusCode::kOutOfRange);
}

TEST(AotKernel, CpuPlanHoldsTheLayerAndRefusesToRunIt) {
  NetworkDefinition net(Registry::global());
  auto y = addAot(net, aotAttrs());
  ASSERT_TRUE(y.isOk()) << y.status().message();
  ASSERT_TRUE(net.markOutput((*y)[0], "y").isOk());
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 8}, {4, 8}, {16, 8}));
  auto plan = Builder(Registry::global()).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  const std::string path = test::testDir() + "/aot.plan";
  ASSERT_TRUE(writeFileAtomic(path, *plan).isOk());
  auto e = Engine::loadFile(path, Registry::global());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  const std::string report = (*e)->inspect();
  EXPECT_NE(report.find("opforge::AotKernel"), std::string::npos) << report;
  auto ctx = std::move((*e)->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 8}).isOk());
  std::vector<float> in(16, 1.f);
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  Status st = ctx->execute();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("opforge::AotKernel (op test::scale_rows) runs only on CUDA"),
            std::string::npos)
      << st.message();
}

TEST(AotKernel, VariantsAreTacticsOfTheNode) {
  // Launches in two variants (the aot_impl's answer for two tactics): tactics 1 (cuda.aot) and 2
  // (cuda.aot.variant1) apply, the others do not; variants must be numbered without a gap, and
  // variant_tactics, where given, names one tactic each.
  const RegisteredOp* op = Registry::global()->find("opforge::AotKernel");
  ASSERT_NE(op, nullptr);
  auto applies = [&](const Attrs& given) {
    AttrMap map;
    for (const auto& [k, v] : given) map.set(k, v);
    std::vector<int32_t> ids;
    auto attrs = op->validateAttrs("aot", map);
    EXPECT_TRUE(attrs.isOk()) << attrs.status().message();
    if (!attrs) return ids;
    auto inst = op->instantiate("aot", *attrs);
    EXPECT_TRUE(inst.isOk()) << inst.status().message();
    if (!inst) return ids;
    const std::vector<TensorDesc> in{TensorDesc{DataType::kFloat32, {4, 8}}};
    const std::vector<TensorDesc> out{TensorDesc{DataType::kFloat32, {4, 8}}};
    size_t ws = 0;
    for (const auto& t : op->schema().tactics)
      if (t.backend == Backend::kCuda && (*inst)->tacticApplies(t.id, in, out, &ws))
        ids.push_back(t.id);
    return ids;
  };
  // A build without CUDA (the sanitizer build) has no CUDA tactics to ask.
  const bool cuda = std::any_of(op->schema().tactics.begin(), op->schema().tactics.end(),
                                [](const auto& t) { return t.backend == Backend::kCuda; });
  Attrs two = aotAttrs(kPtx, aot::testing::twoVariants(1, 3));
  EXPECT_EQ(refusal(two), "accepted");
  if (cuda) {
    EXPECT_EQ(applies(aotAttrs()), (std::vector<int32_t>{1}));
    EXPECT_EQ(applies(two), (std::vector<int32_t>{1, 2}));
  }
  auto launches = aot::parseLaunches(aot::testing::twoVariants(0, 2));
  ASSERT_TRUE(launches.isOk()) << launches.status().message();
  EXPECT_EQ(aot::variantCount(*launches), 2);
  EXPECT_EQ(launches->size(), 6u);
  EXPECT_EQ((*launches)[1].variant, 0);
  EXPECT_EQ((*launches)[4].variant, 1);
  std::string m =
      refusal(aotAttrs(kPtx,
                       "variant=1; kernel=scale; image=0; grid=1, 1, 1; block=128, 1, 1; shared=0; "
                       "args=in0, i32:8, f32:1, out0"));
  EXPECT_NE(m.find("variant 0 has no launch, but variant 1 has"), std::string::npos) << m;
  m = refusal(aotAttrs(kPtx, "variant=8; kernel=scale; grid=1, 1, 1; block=128, 1, 1"));
  EXPECT_NE(m.find("variant \"8\" is not 0 to 7"), std::string::npos) << m;
  two["variant_tactics"] = std::vector<int64_t>{7};
  m = refusal(two);
  EXPECT_NE(m.find("attribute 'variant_tactics' names 1 tactics; the launches hold 2 variants"),
            std::string::npos)
      << m;
  two["variant_tactics"] = std::vector<int64_t>{7, 9};
  EXPECT_EQ(refusal(two), "accepted");
}
