// ai.onnx::Transpose in channels-last formats (its CPU tactics: the reference and the view), the
// builder running its views in place, and the transpose_sinking pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "op_harness.h"
#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/runtime.h"

using namespace opforge;
using namespace opforge::test;

namespace {

// `linear`'s elements stored in `f` (a row-major tensor's bytes rearranged).
std::vector<uint8_t> inFormat(const TensorValue& linear, Format f) {
  TensorDesc d = linear.desc;
  d.format = f;
  const size_t es = dtypeSize(d.dtype);
  std::vector<uint8_t> out(linear.data.size());
  std::vector<int64_t> idx(d.rank(), 0);
  for (int64_t i = 0; i < d.numel(); ++i) {
    std::memcpy(out.data() + physicalOffset(d, idx.data()) * es, linear.data.data() + i * es, es);
    for (int a = d.rank() - 1; a >= 0 && ++idx[a] == d.dims[a]; --a) idx[a] = 0;
  }
  return out;
}

std::vector<int64_t> ints(std::vector<int> p) {
  return {p.begin(), p.end()};
}

// Runs CPU tactic `tactic` of Transpose(perm) on x stored in `fi`, the output in `fo`; returns
// the output's bytes, or an error.
Result<std::vector<uint8_t>> runFormats(const TensorValue& x, const std::vector<int>& perm,
                                        Format fi, Format fo, int32_t tactic) {
  auto reg = Registry::create();
  const RegisteredOp* op = reg->find("ai.onnx::Transpose");
  AttrMap attrs;
  attrs.set("perm", AttrValue(ints(perm)));
  OPFORGE_ASSIGN_OR_RETURN(auto inst, op->instantiate("t", attrs));
  TensorDesc xd = x.desc, yd = x.desc;
  xd.format = fi;
  for (int i = 0; i < xd.rank(); ++i) yd.dims[i] = x.desc.dims[perm[i]];
  yd.format = fo;
  size_t ws = 0;
  if (!inst->tacticApplies(tactic, std::vector<TensorDesc>{xd}, std::vector<TensorDesc>{yd}, &ws))
    return Status::unsupported("does not apply");
  std::vector<uint8_t> xb = inFormat(x, fi), yb(yd.bytes(), 0xff);
  std::vector<Tensor> in = {Tensor{xd, xb.data(), Device::kCpu}};
  std::vector<Tensor> out = {Tensor{yd, yb.data(), Device::kCpu}};
  OPFORGE_RETURN_IF_ERROR(inst->run(tactic, in, out, nullptr, 0, nullptr));
  return yb;
}

}  // namespace

// Every permutation of ranks 3 and 4 (and some of rank 5), every pair of formats: the output's
// bytes are the row-major transposition's, stored in the output's format. The view tactic applies
// exactly where the bytes do not move, and then copies them unchanged.
TEST(TransposeFormats, EveryPermutationAndFormatPairMatchesTheRowMajorTranspose) {
  std::mt19937_64 rng(11);
  const Format L = Format::kLinear, H = Format::kHWC;
  const int32_t view = (1 << 30) + 1;
  int views = 0, runs = 0;
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{2, 3, 4}, {2, 3, 4, 5}, {1, 3, 2, 1, 4}}) {
    const TensorValue x = randomTensor(DataType::kFloat32, dims, rng);
    std::vector<int> perm(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      // The oracle: y[j] = x[i] with y's index j the permutation of x's index i, row-major.
      TensorValue y;
      y.desc = x.desc;
      for (size_t i = 0; i < perm.size(); ++i) y.desc.dims[i] = dims[perm[i]];
      y.data.resize(x.data.size());
      std::vector<int64_t> idx(dims.size(), 0);
      for (int64_t i = 0; i < x.desc.numel(); ++i) {
        int64_t j = 0;
        for (size_t a = 0; a < perm.size(); ++a) j = j * y.desc.dims[a] + idx[perm[a]];
        std::memcpy(y.data.data() + j * 4, x.data.data() + i * 4, 4);
        for (int a = static_cast<int>(dims.size()) - 1; a >= 0 && ++idx[a] == dims[a]; --a)
          idx[a] = 0;
      }
      for (auto [fi, fo] : std::vector<std::pair<Format, Format>>{{L, L}, {L, H}, {H, L}, {H, H}}) {
        const std::string where = describeTensor(x) + " perm " + ::testing::PrintToString(perm) +
                                  " " + formatName(fi) + " -> " + formatName(fo);
        auto got = runFormats(x, perm, fi, fo, 0);
        ASSERT_TRUE(got.isOk()) << where << ": " << got.status().message();
        EXPECT_EQ(*got, inFormat(y, fo)) << where;
        ++runs;
        auto v = runFormats(x, perm, fi, fo, view);
        std::vector<uint8_t> same = inFormat(x, fi);
        const bool bytes_stay = same == inFormat(y, fo);
        if (v.isOk()) {
          ++views;
          EXPECT_EQ(*v, inFormat(y, fo)) << where << " (view)";
        }
        // Where the tactic declines, some element moves (size-1 axes aside, which it may decline).
        if (!v.isOk() && dims.size() == 4) {
          EXPECT_FALSE(bytes_stay) << where;
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  EXPECT_EQ(runs, 4 * (6 + 24 + 120));
  EXPECT_GE(views, 2 * 2);  // at least (0, 2, 3, 1) H -> L and (0, 3, 1, 2) L -> H per rank >= 4
}

// A channels-last value read by Transpose(0, 2, 3, 1): the layer runs the view tactic with its
// output in the input's storage (the plugin op sample::elemwise_add_plugin_ writes channels-last
// here); the result is the row-major transposition. As a network output the view copies.
TEST(TransposeFormats, AViewOfAChannelsLastValueRunsInPlace) {
  std::mt19937_64 rng(5);
  const TensorValue x = randomTensor(DataType::kFloat32, {2, 3, 4, 5}, rng);
  for (bool transposed_is_output : {false, true}) {
    auto reg = contribRegistry();
    NetworkDefinition net(reg);
    auto in = *net.addInput("x", DataType::kFloat32, {2, 3, 4, 5});
    ASSERT_TRUE(net.setInputFormat("x", Format::kHWC).isOk());
    auto w = *net.addOp("sample::elemwise_add_plugin_", {in}, {{"delta", int64_t{2}}}, "add2");
    auto t = *net.addOp("ai.onnx::Transpose", {w[0]}, {{"perm", ints({0, 2, 3, 1})}}, "nhwc");
    auto y = *net.addOp("ai.onnx::Relu", {t[0]}, {}, "relu");
    ASSERT_TRUE(net.markOutput(y[0], "y").isOk());
    if (transposed_is_output) {
      ASSERT_TRUE(net.markOutput(t[0], "t").isOk());
    }
    std::vector<std::string> logs;
    BuilderConfig cfg;
    cfg.log = [&](const std::string& l) { logs.push_back(l); };
    auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    bool placed = false;
    for (const auto& l : logs) placed = placed || l.find("1 views run in place") != l.npos;
    EXPECT_EQ(placed, !transposed_is_output);
    auto e = std::move(Engine::loadMemory(std::move(*plan), "view.plan", reg)).value();
    bool view_tactic = false;
    for (const auto& l : e->layers())
      view_tactic = view_tactic || l.tactic.find("(cpu.view)") != l.tactic.npos;
    EXPECT_TRUE(view_tactic);
    auto ctx = std::move(e->createExecutionContext()).value();
    const std::vector<uint8_t> xb = inFormat(x, Format::kHWC);
    ASSERT_TRUE(ctx->setInput("x", xb.data(), xb.size()).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor out = *ctx->output("y");
    ASSERT_EQ(out.desc.dims, (std::vector<int64_t>{2, 4, 5, 3}));
    const float* px = reinterpret_cast<const float*>(x.data.data());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w2 = 0; w2 < 5; ++w2)
          for (int64_t c = 0; c < 3; ++c) {
            const float want = std::max(0.0f, px[((n * 3 + c) * 4 + h) * 5 + w2] + 2.0f);
            ASSERT_EQ(out.as<float>()[((n * 4 + h) * 5 + w2) * 3 + c], want)
                << "y[" << n << "," << h << "," << w2 << "," << c << "]";
          }
  }
}

namespace {
// Builds `network` (input "x" [2, 3, 4, 5] FP32) on the CPU with the optimization switch on or off,
// runs it on xs; returns output "y" and the build's log.
std::vector<float> buildAndRun(const std::function<void(NetworkDefinition&, TensorRef)>& network,
                               bool optimize, const std::vector<float>& xs,
                               std::vector<std::string>* logs) {
  auto reg = Registry::create();
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kFloat32, {2, 3, 4, 5});
  network(net, x);
  BuilderConfig cfg;
  cfg.constant_folding = optimize;
  cfg.log = [logs](const std::string& l) { logs->push_back(l); };
  auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan) return {};
  auto e = std::move(Engine::loadMemory(std::move(*plan), "sink.plan", reg)).value();
  int transposes = 0;
  for (const auto& l : e->layers()) transposes += l.op.rfind("ai.onnx::Transpose ", 0) == 0;
  logs->push_back("transpose layers: " + std::to_string(transposes));
  auto ctx = std::move(e->createExecutionContext()).value();
  EXPECT_TRUE(ctx->setInput("x", xs.data(), xs.size() * 4).isOk());
  EXPECT_TRUE(ctx->execute().isOk());
  Tensor t = *ctx->output("y");
  return {t.as<float>(), t.as<float>() + t.numel()};
}
bool logged(const std::vector<std::string>& logs, const std::string& text) {
  return std::any_of(logs.begin(), logs.end(),
                     [&](const std::string& l) { return l.find(text) != l.npos; });
}
}  // namespace

// A ConvNeXt-shaped chain: x -> [NHWC] -> relu -> [NCHW] + x, twice, then back to NHWC: the
// residual stream stays NHWC, the Transposes that meet cancel, and the result is unchanged.
TEST(TransposeSinking, AResidualStreamStaysChannelsLastAndTheTransposesCancel) {
  std::mt19937_64 rng(9);
  std::vector<float> xs(2 * 3 * 4 * 5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : xs) v = u(rng);
  auto network = [](NetworkDefinition& net, TensorRef x) {
    TensorRef s = x;
    for (int block = 0; block < 2; ++block) {
      auto t = *net.addOp("ai.onnx::Transpose", {s}, {{"perm", ints({0, 2, 3, 1})}});
      auto r = *net.addOp("ai.onnx::Relu", {t[0]}, {});
      auto b = *net.addOp("ai.onnx::Transpose", {r[0]}, {{"perm", ints({0, 3, 1, 2})}});
      s = (*net.addOp("ai.onnx::Add", {b[0], s}, {}))[0];
    }
    auto t = *net.addOp("ai.onnx::Transpose", {s}, {{"perm", ints({0, 2, 3, 1})}});
    auto m = *net.addOp("ai.onnx::Mul", {t[0], t[0]}, {});
    EXPECT_TRUE(net.markOutput(m[0], "y").isOk());
  };
  std::vector<std::string> on, off;
  const auto want = buildAndRun(network, false, xs, &off);
  const auto got = buildAndRun(network, true, xs, &on);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], want[i]) << i;
  EXPECT_TRUE(logged(off, "transpose layers: 5"));
  // Block 1's Add: the Transpose moves below it (x's undone), block 2's Add: both operands are
  // Transposes; each block's (0, 2, 3, 1) and the last one cancel the (0, 3, 1, 2) above them.
  // Left: x to NHWC, once (block 1's and the undoing one are one after common_subexpressions).
  EXPECT_TRUE(logged(on, "1 Transposes moved below a residual Add"))
      << ::testing::PrintToString(on);
  EXPECT_TRUE(logged(on, "1 Transposes of both operands moved below them"));
  EXPECT_TRUE(logged(on, "2 identity Transposes dropped"));
  EXPECT_TRUE(logged(on, "transpose layers: 1")) << ::testing::PrintToString(on);
}

// Transposes of both operands of a Sub with the same permutation: one Transpose of the difference.
TEST(TransposeSinking, BothOperandsTransposedAlikeGiveOneTransposeOfTheResult) {
  std::vector<float> xs(2 * 3 * 4 * 5);
  std::iota(xs.begin(), xs.end(), -50.0f);
  auto network = [](NetworkDefinition& net, TensorRef x) {
    auto a = *net.addOp("ai.onnx::Relu", {x}, {});
    auto ta = *net.addOp("ai.onnx::Transpose", {a[0]}, {{"perm", ints({2, 0, 3, 1})}});
    auto tx = *net.addOp("ai.onnx::Transpose", {x}, {{"perm", ints({2, 0, 3, 1})}});
    auto d = *net.addOp("ai.onnx::Sub", {ta[0], tx[0]}, {});
    EXPECT_TRUE(net.markOutput(d[0], "y").isOk());
  };
  std::vector<std::string> on, off;
  const auto want = buildAndRun(network, false, xs, &off);
  const auto got = buildAndRun(network, true, xs, &on);
  EXPECT_EQ(got, want);
  EXPECT_TRUE(logged(on, "1 Transposes of both operands moved below them"));
  EXPECT_TRUE(logged(on, "transpose layers: 1"));
}
