// Plan files: written atomically, checked on load (magic, size, checksum, version, ops).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "builder/plan.h"
#include "op_harness.h"

using namespace opforge;

namespace {
std::vector<uint8_t> padPlan() {
  NetworkDefinition net(test::contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 6});
  auto p =
      *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{2, 1}}}, "pad");
  TensorValue w;
  w.desc = TensorDesc{DataType::kFloat32, {2, 9}};
  w.data.assign(w.desc.bytes(), 0);
  for (int i = 0; i < 18; ++i) reinterpret_cast<float*>(w.data.data())[i] = static_cast<float>(i);
  auto c = *net.addConstant("w", w);
  auto s = *net.addOp("ai.onnx::Add", {p[0], c}, {}, "add");
  EXPECT_TRUE(net.markOutput(s[0], "y").isOk());
  Builder b(test::contribRegistry());
  auto plan = b.buildSerializedNetwork(net, {});
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  return *plan;
}
std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::string path = test::testDir() + "/" + name;
  EXPECT_TRUE(writeFileAtomic(path, bytes).isOk());
  return path;
}
Status load(const std::vector<uint8_t>& bytes,
            std::shared_ptr<Registry> reg = test::contribRegistry()) {
  return Engine::loadFile(write("t.plan", bytes), reg).status();
}
}  // namespace

TEST(Plan, RoundTripsThroughAFile) {
  auto bytes = padPlan();
  auto e = Engine::loadFile(write("good.plan", bytes), test::contribRegistry());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  std::vector<float> in = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  ASSERT_TRUE(ctx->setInput("x", in.data(), 48).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{2, 9}));
  // row 0: pad before 2 -> [4,5,0,1,2,3,4,5,0] + [0..8]
  EXPECT_EQ(y.as<float>()[0], 4.f + 0.f);
  EXPECT_EQ(y.as<float>()[8], 0.f + 8.f);
  EXPECT_EQ(y.as<float>()[9], 10.f + 9.f);
  EXPECT_EQ((*e)->weightBytes(), 72u);
  std::string report = (*e)->inspect();
  EXPECT_NE(report.find("example::circ_pad_plugin v1"), std::string::npos) << report;
  EXPECT_NE(report.find("libopforge_ops.so"), std::string::npos);
}

TEST(Plan, TruncatedFilesAreRefused) {
  auto bytes = padPlan();
  for (size_t keep :
       {size_t{0}, size_t{7}, size_t{40}, size_t{64}, bytes.size() / 2, bytes.size() - 1}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(keep));
    Status st = load(cut);
    ASSERT_FALSE(st.isOk()) << keep;
    EXPECT_TRUE(st.message().find("truncated") != std::string::npos ||
                st.message().find("empty") != std::string::npos ||
                st.message().find("not an opforge plan") != std::string::npos)
        << keep << ": " << st.message();
  }
}

TEST(Plan, EveryFlippedByteIsDetected) {
  auto bytes = padPlan();
  for (size_t i = 0; i < bytes.size(); i += std::max<size_t>(1, bytes.size() / 97)) {
    auto bad = bytes;
    bad[i] ^= 0x20;
    auto r = Engine::loadMemory(bad, "flipped.plan", test::contribRegistry());
    ASSERT_FALSE(r.isOk()) << "flip at byte " << i << " went unnoticed";
  }
  auto bad = bytes;
  bad[bytes.size() - 3] ^= 1;  // inside the weights
  Status st = load(bad);
  EXPECT_NE(st.message().find("checksum mismatch"), std::string::npos) << st.message();
}

TEST(Plan, NewerFormatVersionNamesBothVersions) {
  auto bytes = padPlan();
  uint32_t v = plan::kFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &v, 4);
  Status st = load(bytes);
  EXPECT_EQ(st.code(), StatusCode::kVersion);
  EXPECT_NE(st.message().find("format version 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("reads version 1"), std::string::npos);
  EXPECT_NE(st.message().find("newer opforge"), std::string::npos);
}

TEST(Plan, NotAPlan) {
  std::string text = "this is not a plan file at all, just words";
  Status st = load(std::vector<uint8_t>(text.begin(), text.end()));
  EXPECT_NE(st.message().find("not an opforge plan file"), std::string::npos) << st.message();
  auto missing = Engine::loadFile("/nonexistent/x.plan");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Plan, MissingPluginNamesTheOpAndTheFlag) {
  auto bytes = padPlan();
  Status st = load(bytes, Registry::create());  // built-ins only
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("example::circ_pad_plugin v1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("node 'pad'"), std::string::npos);
  EXPECT_NE(st.message().find("libopforge_ops.so"), std::string::npos);
  EXPECT_NE(st.message().find("--plugins="), std::string::npos);
}

TEST(Plan, UnwritablePathLeavesNothing) {
  Status st = writeFileAtomic("/nonexistent-dir/x.plan", {1, 2, 3});
  EXPECT_EQ(st.code(), StatusCode::kIo);
  EXPECT_NE(st.message().find("/nonexistent-dir/x.plan"), std::string::npos);
  struct stat sb;
  EXPECT_NE(::stat("/nonexistent-dir/x.plan", &sb), 0);
}
