// Shape inputs whose values are run-time data (opforge::ReadValues, docs/architecture.md "Run-time
// shape values"): a Resize to sizes the data gives, Slices with run-time starts of either sign, a
// ConstantOfShape of a run-time length concatenated back to a static shape, Expand / Tile / TopK /
// Range with run-time shape inputs; each run with several values on one context (its buffers
// grow), through a plan serialized and loaded.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "onnx_model.h"
#include "opforge/builder.h"
#include "opforge/runtime.h"

using namespace opforge;

namespace {

using test::Model;

Result<std::shared_ptr<const Engine>> build(const Model& m, const std::string& name) {
  auto reg = Registry::global();
  OPFORGE_ASSIGN_OR_RETURN(auto net, importOnnxBytes(m.m.SerializeAsString(), name, "", reg));
  OPFORGE_ASSIGN_OR_RETURN(auto plan, Builder(reg).buildSerializedNetwork(net, {}));
  OPFORGE_ASSIGN_OR_RETURN(auto e, Engine::loadMemory(plan, name, reg));
  return std::shared_ptr<const Engine>(std::move(e));
}

int countLayers(const Engine& e, const std::string& op) {
  int n = 0;
  for (const auto& l : e.layers()) n += l.op == op;
  return n;
}

}  // namespace

namespace {
// y = Neg(Resize(x, sizes = Concat([1, 1], hw))), nearest, asymmetric, floor, x [1, 1, 4, 5].
Model resizeToRunTimeSizes() {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 1, 4, 5});
  m.input("hw", onnx::TensorProto::INT64, {2});
  test::constInt64(m.g(), "nc", {2}, {1, 1});
  test::intAttr(m.node("Concat", {"nc", "hw"}, {"sizes"}, "concat"), "axis", 0);
  auto* r = m.node("Resize", {"x", "", "", "sizes"}, {"r"}, "resize");
  test::strAttr(r, "mode", "nearest");
  test::strAttr(r, "coordinate_transformation_mode", "asymmetric");
  test::strAttr(r, "nearest_mode", "floor");
  m.node("Neg", {"r"}, {"y"}, "neg");
  m.output("y", onnx::TensorProto::FLOAT);
  return m;
}
}  // namespace

// The output's dims are the run-time values of hw, its elements -x at floor(i * H / h),
// floor(j * W / w).
TEST(RuntimeValues, ResizeToSizesTheDataGives) {
  auto e = build(resizeToRunTimeSizes(), "resize_rt.onnx");
  ASSERT_TRUE(e.isOk()) << e.status().message();
  EXPECT_EQ(countLayers(**e, "opforge::ReadValues v1"), 1);
  // inspect names the layers sized at run time: the Resize and the Neg after it.
  const std::string text = (*e)->inspect();
  EXPECT_NE(text.find("sized at run time: 2 layer(s)"), std::string::npos) << text;
  auto ctx = std::move((*e)->createExecutionContext()).value();
  std::vector<float> x(20);
  for (int i = 0; i < 20; ++i) x[i] = static_cast<float>(i + 1);
  ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
  EXPECT_EQ(ctx->shape("y").status().code(), StatusCode::kInvalidArgument);  // known after a run
  for (auto [h, w] : {std::pair<int64_t, int64_t>{7, 3}, {2, 9}, {20, 30}, {1, 1}, {0, 4}}) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    const int64_t hw[2] = {h, w};
    ASSERT_TRUE(ctx->setInput("hw", hw, sizeof(hw)).isOk());
    ctx->setDebugPoison(true);
    const Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    Tensor y = *ctx->output("y");
    ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{1, 1, h, w}));
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        ASSERT_EQ(y.as<float>()[i * w + j], -x[(i * 4 / h) * 5 + j * 5 / w]) << i << " " << j;
  }
  // A negative size, and sizes whose tensor would hold 2^60 elements: errors naming the layer and
  // the value; the context runs again after each.
  for (auto [h, w, want] : {std::tuple<int64_t, int64_t, const char*>{-3, 4, "= -3"},
                            {int64_t{1} << 30, int64_t{1} << 30, "elements"}}) {
    SCOPED_TRACE(want);
    const int64_t bad[2] = {h, w};
    ASSERT_TRUE(ctx->setInput("hw", bad, sizeof(bad)).isOk());
    const Status st = ctx->execute();
    ASSERT_FALSE(st.isOk());
    EXPECT_NE(st.message().find("resize"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
    const int64_t good[2] = {3, 2};
    ASSERT_TRUE(ctx->setInput("hw", good, sizeof(good)).isOk());
    const Status again = ctx->execute();
    ASSERT_TRUE(again.isOk()) << again.message();
    EXPECT_EQ(ctx->output("y")->desc.dims, (std::vector<int64_t>{1, 1, 3, 2}));
  }
}

// setMemoryLimit caps the tensors sized at run time too (a plan fuzzer finding: a loaded plan's
// run-time size reserved 15 GB past a 16 MiB cap): the Resize above to 1000 x 1000 (4 MB twice) is
// refused under a 1 MB cap, naming the tensor, the bytes and the cap, and runs within it after.
TEST(RuntimeValues, TheMemoryLimitCapsTensorsSizedAtRunTime) {
  auto e = build(resizeToRunTimeSizes(), "resize_cap.onnx");
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  ctx->setMemoryLimit(1 << 20);
  std::vector<float> x(20, 1.f);
  ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
  const int64_t big[2] = {1000, 1000};
  ASSERT_TRUE(ctx->setInput("hw", big, sizeof(big)).isOk());
  const Status st = ctx->execute();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("needs 4000000 bytes in this run"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("its limit is 1048576 bytes (setMemoryLimit)"), std::string::npos)
      << st.message();
  const int64_t small[2] = {100, 100};
  ASSERT_TRUE(ctx->setInput("hw", small, sizeof(small)).isOk());
  const Status again = ctx->execute();
  ASSERT_TRUE(again.isOk()) << again.message();
  EXPECT_EQ(ctx->output("y")->desc.dims, (std::vector<int64_t>{1, 1, 100, 100}));
  ctx->setMemoryLimit(0);  // no cap: the large run fits the machine
  ASSERT_TRUE(ctx->setInput("hw", big, sizeof(big)).isOk());
  const Status uncapped = ctx->execute();
  EXPECT_TRUE(uncapped.isOk()) << uncapped.message();
}

// y = Slice(x, starts = s, ends = [100]) and z = Slice(x, [0], ends = s) with s of either sign:
// negative values count from the end, as ONNX says, and clamp to the axis.
TEST(RuntimeValues, SliceStartsOfEitherSign) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {10});
  m.input("s", onnx::TensorProto::INT64, {1});
  test::constInt64(m.g(), "hundred", {1}, {100});
  test::constInt64(m.g(), "zero", {1}, {0});
  m.node("Slice", {"x", "s", "hundred"}, {"y"}, "tail");
  m.node("Slice", {"x", "zero", "s"}, {"z"}, "head");
  m.output("y", onnx::TensorProto::FLOAT);
  m.output("z", onnx::TensorProto::FLOAT);
  auto e = build(m, "slice_rt.onnx");
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i);
  ASSERT_TRUE(ctx->setInput("x", x.data(), 40).isOk());
  for (int64_t s : {int64_t{-3}, int64_t{2}, int64_t{-20}, int64_t{50}, int64_t{0}, int64_t{-1},
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    SCOPED_TRACE(s);
    ASSERT_TRUE(ctx->setInput("s", &s, 8).isOk());
    const Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    const int64_t start =
        s < 0 ? std::max<int64_t>(s < -10 ? 0 : s + 10, 0) : std::min<int64_t>(s, 10);
    Tensor y = *ctx->output("y"), z = *ctx->output("z");
    ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{10 - start}));
    ASSERT_EQ(z.desc.dims, (std::vector<int64_t>{start}));
    for (int64_t i = 0; i < 10 - start; ++i) EXPECT_EQ(y.as<float>()[i], x[start + i]);
    for (int64_t i = 0; i < start; ++i) EXPECT_EQ(z.as<float>()[i], x[i]);
  }
}

// As torchvision pastes a mask into the image: zeros of a run-time length n, then the first 6 - n
// elements of x, concatenated (6 elements whatever n is), then added to a static tensor.
TEST(RuntimeValues, ConstantOfShapeConcatenatedBackToAStaticShape) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {6});
  m.input("n", onnx::TensorProto::INT64, {1});
  test::constInt64(m.g(), "six", {1}, {6});
  test::constInt64(m.g(), "zero", {1}, {0});
  m.node("ConstantOfShape", {"n"}, {"zeros"}, "zeros");
  m.node("Sub", {"six", "n"}, {"rest"}, "rest");
  m.node("Slice", {"x", "zero", "rest"}, {"head"}, "head");
  test::intAttr(m.node("Concat", {"zeros", "head"}, {"c"}, "concat"), "axis", 0);
  m.node("Add", {"c", "x"}, {"y"}, "add");
  m.output("y", onnx::TensorProto::FLOAT);
  auto e = build(m, "paste_rt.onnx");
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(ctx->setInput("x", x.data(), 24).isOk());
  for (int64_t n : {int64_t{0}, int64_t{2}, int64_t{6}, int64_t{4}}) {
    SCOPED_TRACE(n);
    ASSERT_TRUE(ctx->setInput("n", &n, 8).isOk());
    const Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    Tensor y = *ctx->output("y");
    ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{6}));
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(y.as<float>()[i], (i < n ? 0.0f : x[i - n]) + x[i]) << i;
  }
  // A length past the static shape: the Concat's run-time check, not a wrong answer.
  const int64_t n = 7;
  ASSERT_TRUE(ctx->setInput("n", &n, 8).isOk());
  const Status st = ctx->execute();
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("add"), std::string::npos) << st.message();
}

// A shape input that is not a short vector of static length stays the error it was.
TEST(RuntimeValues, OnlyShortStaticVectorsAreRead) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  m.input("shape", onnx::TensorProto::INT64, {-1});
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.output("y", onnx::TensorProto::FLOAT);
  auto e = build(m, "reshape_rt.onnx");
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("node 'reshape' (ai.onnx::Reshape): input 'shape' must be "
                                      "known when the network is built"),
            std::string::npos)
      << e.status().message();
}

// Expand to a run-time shape, Tile by run-time repeats, TopK with a run-time k, Range to a run-time
// limit: each checked against the ONNX definition for several values (zero sizes among them) on
// one context, the outputs poisoned before each run.
TEST(RuntimeValues, ExpandTileTopKAndRangeTakeRunTimeValues) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 3});
  m.input("shape", onnx::TensorProto::INT64, {2});
  m.input("reps", onnx::TensorProto::INT64, {2});
  m.input("k", onnx::TensorProto::INT64, {1});
  m.input("lim", onnx::TensorProto::INT64, {});
  test::constInt64(m.g(), "start", {}, {2});
  test::constInt64(m.g(), "step", {}, {3});
  m.node("Expand", {"x", "shape"}, {"ex"}, "expand");
  m.node("Tile", {"x", "reps"}, {"ti"}, "tile");
  m.node("TopK", {"x", "k"}, {"tv", "tix"}, "topk");
  m.node("Range", {"start", "lim", "step"}, {"ra"}, "range");
  for (const char* o : {"ex", "ti", "tv"}) m.output(o, onnx::TensorProto::FLOAT);
  m.output("tix", onnx::TensorProto::INT64);
  m.output("ra", onnx::TensorProto::INT64);
  auto e = build(m, "ops_rt.onnx");
  ASSERT_TRUE(e.isOk()) << e.status().message();
  // Expand, Tile and Range read their values; TopK's k was already a data-dependent size (at most
  // the axis).
  EXPECT_EQ(countLayers(**e, "opforge::ReadValues v1"), 3);
  auto ctx = std::move((*e)->createExecutionContext()).value();
  const std::vector<float> x = {5, -1, 7};
  ASSERT_TRUE(ctx->setInput("x", x.data(), 12).isOk());
  struct Values {
    int64_t rows, cols, rep0, rep1, k, lim;
  };
  for (const Values v :
       {Values{4, 3, 2, 3, 2, 11}, Values{1, 1, 1, 1, 3, 2}, Values{0, 3, 0, 2, 0, 2},
        Values{2, 1, 3, 1, 1, -5}, Values{6, 3, 1, 4, 3, 30}}) {
    SCOPED_TRACE(std::to_string(v.rows) + " " + std::to_string(v.cols) + " " + std::to_string(v.k));
    const int64_t shape[2] = {v.rows, v.cols}, reps[2] = {v.rep0, v.rep1};
    ASSERT_TRUE(ctx->setInput("shape", shape, 16).isOk());
    ASSERT_TRUE(ctx->setInput("reps", reps, 16).isOk());
    ASSERT_TRUE(ctx->setInput("k", &v.k, 8).isOk());
    ASSERT_TRUE(ctx->setInput("lim", &v.lim, 8).isOk());
    ctx->setDebugPoison(true);
    const Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    // Expand broadcasts [1, 3] with [rows, cols] (cols 1 or 3): [rows, 3].
    Tensor ex = *ctx->output("ex");
    ASSERT_EQ(ex.desc.dims, (std::vector<int64_t>{v.rows, 3}));
    for (int64_t i = 0; i < v.rows * 3; ++i) EXPECT_EQ(ex.as<float>()[i], x[i % 3]);
    Tensor ti = *ctx->output("ti");
    ASSERT_EQ(ti.desc.dims, (std::vector<int64_t>{v.rep0, 3 * v.rep1}));
    for (int64_t i = 0; i < v.rep0 * 3 * v.rep1; ++i) EXPECT_EQ(ti.as<float>()[i], x[i % 3]);
    // TopK: the k largest of {5, -1, 7}, descending, with their indices.
    const float vals[3] = {7, 5, -1};
    const int64_t idx[3] = {2, 0, 1};
    Tensor tv = *ctx->output("tv"), tix = *ctx->output("tix");
    ASSERT_EQ(tv.desc.dims, (std::vector<int64_t>{1, v.k}));
    ASSERT_EQ(tix.desc.dims, (std::vector<int64_t>{1, v.k}));
    for (int64_t i = 0; i < v.k; ++i) {
      EXPECT_EQ(tv.as<float>()[i], vals[i]);
      EXPECT_EQ(tix.as<int64_t>()[i], idx[i]);
    }
    // Range(2, lim, 3): max(ceil((lim - 2) / 3), 0) elements.
    const int64_t n = std::max<int64_t>((v.lim - 2 + 2) / 3, 0);
    Tensor ra = *ctx->output("ra");
    ASSERT_EQ(ra.desc.dims, (std::vector<int64_t>{n}));
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(ra.as<int64_t>()[i], 2 + 3 * i);
  }
  // A k past the axis is the TopK node's error, not an overflow.
  const int64_t k = 4;
  ASSERT_TRUE(ctx->setInput("k", &k, 8).isOk());
  const Status st = ctx->execute();
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("topk"), std::string::npos) << st.message();
}

// OneHot's depth, Split's sizes and CenterCropPad's shape from run-time data; an axes input that
// would change a rank (Unsqueeze's) stays a build error, as in TensorRT.
TEST(RuntimeValues, OneHotSplitAndCenterCropPadTakeRunTimeValues) {
  Model m;
  m.input("i", onnx::TensorProto::INT64, {3});
  m.input("depth", onnx::TensorProto::INT64, {1});
  m.input("a", onnx::TensorProto::FLOAT, {4, 6});
  m.input("sizes", onnx::TensorProto::INT64, {2});
  m.input("crop", onnx::TensorProto::INT64, {2});
  m.input("vals", onnx::TensorProto::FLOAT, {2});
  m.node("OneHot", {"i", "depth", "vals"}, {"oh"}, "onehot");
  test::intAttr(m.node("Split", {"a", "sizes"}, {"s1", "s2"}, "split"), "axis", 1);
  m.node("CenterCropPad", {"a", "crop"}, {"cc"}, "crop");
  for (const char* o : {"oh", "s1", "s2", "cc"}) m.output(o, onnx::TensorProto::FLOAT);
  auto e = build(m, "more_rt.onnx");
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  const int64_t idx[3] = {0, 2, 4};
  const float vals[2] = {-1, 1};
  std::vector<float> a(24);
  for (int k = 0; k < 24; ++k) a[k] = static_cast<float>(k);
  ASSERT_TRUE(ctx->setInput("i", idx, sizeof(idx)).isOk());
  ASSERT_TRUE(ctx->setInput("vals", vals, sizeof(vals)).isOk());
  ASSERT_TRUE(ctx->setInput("a", a.data(), a.size() * 4).isOk());
  for (auto [depth, left, rows, cols] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{5, 2, 3, 8}, {3, 0, 4, 6}, {1, 6, 2, 2}}) {
    SCOPED_TRACE(depth);
    const int64_t sizes[2] = {left, 6 - left}, crop[2] = {rows, cols};
    ASSERT_TRUE(ctx->setInput("depth", &depth, 8).isOk());
    ASSERT_TRUE(ctx->setInput("sizes", sizes, sizeof(sizes)).isOk());
    ASSERT_TRUE(ctx->setInput("crop", crop, sizeof(crop)).isOk());
    ctx->setDebugPoison(true);
    const Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    Tensor oh = *ctx->output("oh");
    ASSERT_EQ(oh.desc.dims, (std::vector<int64_t>{3, depth}));
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < depth; ++c)
        EXPECT_EQ(oh.as<float>()[r * depth + c], c == idx[r] ? 1.0f : -1.0f) << r << " " << c;
    Tensor s1 = *ctx->output("s1"), s2 = *ctx->output("s2");
    ASSERT_EQ(s1.desc.dims, (std::vector<int64_t>{4, left}));
    ASSERT_EQ(s2.desc.dims, (std::vector<int64_t>{4, 6 - left}));
    for (int64_t r = 0; r < 4; ++r) {
      for (int64_t c = 0; c < left; ++c) EXPECT_EQ(s1.as<float>()[r * left + c], a[r * 6 + c]);
      for (int64_t c = 0; c < 6 - left; ++c)
        EXPECT_EQ(s2.as<float>()[r * (6 - left) + c], a[r * 6 + left + c]);
    }
    // CenterCropPad: each axis cropped or zero-padded about its centre (ONNX: the extra element
    // of an odd difference goes to the end).
    Tensor cc = *ctx->output("cc");
    ASSERT_EQ(cc.desc.dims, (std::vector<int64_t>{rows, cols}));
    const int64_t dr = rows - 4, dc = cols - 6;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t sr = dr >= 0 ? r - dr / 2 : r + (-dr) / 2;
        const int64_t sc = dc >= 0 ? c - dc / 2 : c + (-dc) / 2;
        const float want = sr >= 0 && sr < 4 && sc >= 0 && sc < 6 ? a[sr * 6 + sc] : 0.0f;
        EXPECT_EQ(cc.as<float>()[r * cols + c], want) << r << " " << c;
      }
  }
  Model u;
  u.input("a", onnx::TensorProto::FLOAT, {4, 6});
  u.input("axes", onnx::TensorProto::INT64, {1});
  u.node("Unsqueeze", {"a", "axes"}, {"y"}, "unsqueeze");
  u.output("y", onnx::TensorProto::FLOAT);
  auto bad = build(u, "unsqueeze_rt.onnx");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("node 'unsqueeze' (ai.onnx::Unsqueeze): input 'axes' must "
                                        "be known when the network is built"),
            std::string::npos)
      << bad.status().message();
}
