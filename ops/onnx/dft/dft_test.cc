// ai.onnx::DFT and ai.onnx::STFT on the CPU: transforms worked out by hand, an rfft / irfft round
// trip, and bad input named with the node, the op and the value.
#include <gtest/gtest.h>

#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
// Runs a one-node network whose first input is a network input and the others constants.
Result<std::vector<double>> runConst(const std::string& op, const Attrs& attrs, TensorValue x,
                                     const std::vector<TensorValue>& consts) {
  auto reg = Registry::global();
  NetworkDefinition net(reg);
  std::vector<TensorRef> refs;
  OPFORGE_ASSIGN_OR_RETURN(auto xi, net.addInput("x", x.desc.dtype, x.desc.dims));
  refs.push_back(xi);
  for (size_t i = 0; i < consts.size(); ++i) {
    if (consts[i].desc.dtype == DataType::kUndefined) {
      refs.push_back(TensorRef{});
      continue;
    }
    OPFORGE_ASSIGN_OR_RETURN(auto c, net.addConstant("c" + std::to_string(i), consts[i]));
    refs.push_back(c);
  }
  OPFORGE_ASSIGN_OR_RETURN(auto outs, net.addOp(op, refs, attrs, "dft_node"));
  OPFORGE_RETURN_IF_ERROR(net.markOutput(outs[0], "y"));
  Builder b(reg);
  OPFORGE_ASSIGN_OR_RETURN(auto plan, b.buildSerializedNetwork(net, BuilderConfig{}));
  OPFORGE_ASSIGN_OR_RETURN(auto engine, Engine::loadMemory(std::move(plan), "dft", reg));
  OPFORGE_ASSIGN_OR_RETURN(auto ctx, engine->createExecutionContext());
  OPFORGE_RETURN_IF_ERROR(ctx->setInput("x", x.data.data(), x.data.size()));
  OPFORGE_RETURN_IF_ERROR(ctx->execute());
  OPFORGE_ASSIGN_OR_RETURN(Tensor t, ctx->output("y"));
  TensorValue y;
  y.desc = t.desc;
  y.data.assign(static_cast<const uint8_t*>(t.data),
                static_cast<const uint8_t*>(t.data) + t.bytes());
  return toDoubles(y);
}
TensorValue scalar64(int64_t v) {
  return fromInt64s({}, {v});
}
void expectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}
}  // namespace

TEST(Dft, FourPointsByHand) {
  // DFT(1, 2, 3, 4) = (10, -2 + 2i, -2, -2 - 2i); the inverse gives the signal back.
  const Attrs fwd{{"_onnx_opset", int64_t{20}}};
  auto y = runConst("ai.onnx::DFT", fwd, fromFloats({1, 4, 1}, {1, 2, 3, 4}), {});
  ASSERT_TRUE(y.isOk()) << y.status().message();
  expectNear(*y, {10, 0, -2, 2, -2, 0, -2, -2}, 1e-5);
  const Attrs inv{{"_onnx_opset", int64_t{20}}, {"inverse", int64_t{1}}};
  auto x = runConst("ai.onnx::DFT", inv, fromFloats({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2}), {});
  ASSERT_TRUE(x.isOk()) << x.status().message();
  expectNear(*x, {1, 0, 2, 0, 3, 0, 4, 0}, 1e-5);
  // One-sided, opset 17 axis attribute: the first n / 2 + 1 bins.
  const Attrs rfft{{"_onnx_opset", int64_t{17}}, {"axis", int64_t{1}}, {"onesided", int64_t{1}}};
  auto h = runConst("ai.onnx::DFT", rfft, fromFloats({1, 4, 1}, {1, 2, 3, 4}), {});
  ASSERT_TRUE(h.isOk()) << h.status().message();
  expectNear(*h, {10, 0, -2, 2, -2, 0}, 1e-5);
}

TEST(Dft, RfftThenIrfftIsTheSignal) {
  std::mt19937_64 rng(11);
  for (int64_t n : {6, 7}) {
    const TensorValue x = randomTensor(DataType::kFloat32, {2, n, 1}, rng);
    const Attrs rfft{{"_onnx_opset", int64_t{20}}, {"onesided", int64_t{1}}};
    auto spec = runConst("ai.onnx::DFT", rfft, x, {});
    ASSERT_TRUE(spec.isOk()) << spec.status().message();
    std::vector<float> sf(spec->begin(), spec->end());
    const int64_t bins = n / 2 + 1;
    const Attrs irfft{
        {"_onnx_opset", int64_t{20}}, {"inverse", int64_t{1}}, {"onesided", int64_t{1}}};
    auto back =
        runConst("ai.onnx::DFT", irfft, fromFloats({2, bins, 2}, sf), {scalar64(n), TensorValue{}});
    ASSERT_TRUE(back.isOk()) << back.status().message();
    expectNear(*back, toDoubles(x), 1e-5);
  }
}

TEST(Stft, FramesByHand) {
  // Signal 1..6, frames of 4 every 2 samples, no window: frame 0 (1, 2, 3, 4), frame 1 (3, 4, 5,
  // 6); one-sided bins 0, 1, 2.
  auto y = runConst("ai.onnx::STFT", {}, fromFloats({1, 6, 1}, {1, 2, 3, 4, 5, 6}),
                    {scalar64(2), TensorValue{}, scalar64(4)});
  ASSERT_TRUE(y.isOk()) << y.status().message();
  expectNear(*y, {10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0}, 1e-5);
}

TEST(Dft, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 8, 1});
  auto x3 = *net.addInput("x3", DataType::kFloat32, {2, 8, 3});
  auto len0 = *net.addConstant("len0", scalar64(0));
  auto last = *net.addConstant("last", scalar64(2));
  auto dyn = *net.addInput("dyn", DataType::kInt64, {});
  const Attrs o20{{"_onnx_opset", int64_t{20}}};
  expectError(net.addOp("ai.onnx::DFT", {x, TensorRef{}, last}, o20, "dft_node").status(),
              {"dft_node", "ai.onnx::DFT", "axis 2 is out of range", "real and imaginary"});
  expectError(net.addOp("ai.onnx::DFT", {x, len0}, o20, "dft_node").status(),
              {"dft_node", "'dft_length' must be in [1, 2^31], got 0"});
  expectError(net.addOp("ai.onnx::DFT", {x3}, o20, "dft_node").status(),
              {"dft_node", "must end in an axis of 1 (real) or 2 (complex)"});
  expectError(net.addOp("ai.onnx::DFT", {x, TensorRef{}, dyn}, o20, "dft_node").status(),
              {"dft_node", "input 'axis' must be known when the network is built"});
  expectError(net.addOp("ai.onnx::DFT", {x}, {{"inverse", int64_t{2}}}, "dft_node").status(),
              {"'inverse' must be 0 or 1, got 2"});
  auto step = *net.addConstant("step", scalar64(2));
  auto fl = *net.addConstant("fl", scalar64(9));
  auto w = *net.addInput("w", DataType::kFloat32, {4});
  expectError(net.addOp("ai.onnx::STFT", {x, step, TensorRef{}, fl}, {}, "stft_node").status(),
              {"stft_node", "ai.onnx::STFT", "frame length 9 is longer than the signal (8"});
  expectError(net.addOp("ai.onnx::STFT", {x, step, w, fl}, {}, "stft_node").status(),
              {"stft_node", "'frame_length' must be the window's length", "4 vs 9"});
  expectError(net.addOp("ai.onnx::STFT", {x, len0}, {}, "stft_node").status(),
              {"stft_node", "'frame_step' must be one value >= 1"});
}
