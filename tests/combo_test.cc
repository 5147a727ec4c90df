#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "opforge/combo.h"
#include "opforge/op.h"

using namespace opforge;

TEST(Combo, BarMovesTogether) {
  auto r = expandCombo(Combo("FP32|FP16, FP32|FP16", "LINEAR"), 2);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(describe((*r)[0]), "FP32, FP32");
  EXPECT_EQ(describe((*r)[1]), "FP16, FP16");
}

TEST(Combo, StarIsIndependent) {
  auto r = expandCombo(Combo("FP32, FP32", "LINEAR*HWC"), 2);
  ASSERT_TRUE(r.isOk());
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ(describe((*r)[3]), "FP32:HWC, FP32:HWC");
  auto t = expandCombo(Combo("FP32*FP16*INT32*BOOL, INT32, INT32"), 3);
  ASSERT_TRUE(t.isOk());
  EXPECT_EQ(t->size(), 4u);
}

TEST(Combo, SingleEntryAppliesToAllPositions) {
  auto r = expandCombo(Combo("FP32|FP16|BF16", "LINEAR"), 3);
  ASSERT_TRUE(r.isOk());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(describe((*r)[2]), "BF16, BF16, BF16");
}

TEST(Combo, PosAndTactics) {
  Combo c;
  c.pos({0, 1}, "FP32|FP16").tactics({1, 2});
  auto r = expandCombo(c, 2);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].types[1], DataType::kFloat16);
  EXPECT_EQ((*r)[0].formats[0], Format::kLinear);
  EXPECT_EQ((*r)[0].tactic_ids, (std::vector<int32_t>{1, 2}));
}

TEST(Combo, ErrorsNameTheProblem) {
  auto a = expandCombo(Combo("FP32|FP16, FP32", "LINEAR"), 3);
  ASSERT_FALSE(a.isOk());
  EXPECT_NE(a.status().message().find("2 entries for 3"), std::string::npos)
      << a.status().message();
  auto b = expandCombo(Combo("FP32|FP16, FP32|FP16|BF16"), 2);
  ASSERT_FALSE(b.isOk());
  EXPECT_NE(b.status().message().find("different numbers"), std::string::npos);
  auto c = expandCombo(Combo("FP33, FP32"), 2);
  ASSERT_FALSE(c.isOk());
  EXPECT_NE(c.status().message().find("FP33"), std::string::npos);
  auto d = expandCombo(Combo("FP32", "LINEAR*NCHW"), 1);
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("NCHW"), std::string::npos);
  Combo e;
  e.pos({5}, "FP32");
  EXPECT_FALSE(expandCombo(e, 2).isOk());
}

// AttrMap::get never invents a value: a name not set, or a read as another type, is an op bug
// and throws with the attribute and both types named.
TEST(AttrMap, GetOfAMissingOrMistypedAttributeThrows) {
  AttrMap a;
  a.set("axis", int64_t{3});
  a.set("alpha", 0.5);
  EXPECT_EQ(a.get<int64_t>("axis"), 3);
  EXPECT_EQ(a.get<int>("axis"), 3);
  EXPECT_FLOAT_EQ(a.get<float>("alpha"), 0.5f);
  try {
    (void)a.get<int64_t>("keepdims");
    ADD_FAILURE() << "no throw for a missing attribute";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'keepdims' is not set"), std::string::npos) << e.what();
  }
  try {
    (void)a.get<std::string>("axis");
    ADD_FAILURE() << "no throw for a mistyped read";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'axis' holds int, read as string"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)a.get<float>("axis"), std::logic_error);
  EXPECT_THROW((void)a.get<int>("alpha"), std::logic_error);
}

// fitCombo (opforge/combo.h): the one matcher of the builder and the Python op runner.
namespace {
OpSchema twoInOneOut(bool variadic = false) {
  OpSchema s;
  s.ns = "test";
  s.name = "Op";
  IoDef a, b, y;
  a.name = "a";
  b.name = "b";
  b.optional = !variadic;
  b.variadic = variadic;
  y.name = "y";
  s.inputs = {a, b};
  s.outputs = {y};
  return s;
}
ConcreteCombo only(const std::string& types, const std::string& formats = "LINEAR") {
  auto r = expandCombo(Combo(types, formats), 3);
  EXPECT_TRUE(r.isOk() && r->size() == 1u);
  return r->front();
}
}  // namespace

TEST(ComboFit, TypesMatchExactlyAndOmittedInputsAreNotChecked) {
  const OpSchema s = twoInOneOut();
  const ComboSlot f32{DataType::kFloat32, Format::kLinear, 4}, i32{DataType::kInt32};
  ComboFit f = fitCombo(s, only("FP32, FP32, FP32"), {f32, f32}, {f32}, {-1});
  EXPECT_TRUE(f.fits());
  EXPECT_EQ(f.lowered, DataType::kFloat32);
  EXPECT_EQ(f.input_reformats + f.output_reformats, 0);
  EXPECT_FALSE(fitCombo(s, only("FP32, FP32, FP32"), {f32, i32}, {f32}, {-1}).types);
  EXPECT_FALSE(fitCombo(s, only("FP16, FP16, FP16"), {f32, f32}, {f32}, {-1}).types);
  // An omitted optional input (kUndefined) matches any entry.
  EXPECT_TRUE(fitCombo(s, only("FP32, INT64, FP32"), {f32, ComboSlot{}}, {f32}, {-1}).fits());
  // A variadic tail takes the last declared input's entry.
  const OpSchema v = twoInOneOut(true);
  EXPECT_TRUE(fitCombo(v, only("FP32, INT32, FP32"), {f32, i32, i32}, {f32}, {-1}).fits());
  EXPECT_FALSE(fitCombo(v, only("FP32, INT32, FP32"), {f32, i32, f32}, {f32}, {-1}).types);
}

TEST(ComboFit, LoweringTakesOneReducedTypeForEveryFp32Position) {
  const OpSchema s = twoInOneOut();
  const ComboSlot f32{DataType::kFloat32, Format::kLinear, 2};
  const std::vector<DataType> fp16 = {DataType::kFloat16};
  ComboFit f = fitCombo(s, only("FP16, FP16, FP16"), {f32, f32}, {f32}, {-1}, fp16);
  EXPECT_TRUE(f.fits());
  EXPECT_EQ(f.lowered, DataType::kFloat16);
  // Mixed: one FP32 position at FP16, another at FP32, is not one precision.
  EXPECT_FALSE(fitCombo(s, only("FP16, FP32, FP16"), {f32, f32}, {f32}, {-1}, fp16).types);
  // BF16 was not asked for.
  EXPECT_FALSE(fitCombo(s, only("BF16, BF16, BF16"), {f32, f32}, {f32}, {-1}, fp16).types);
  // Non-FP32 positions are never lowered.
  const ComboSlot i64{DataType::kInt64, Format::kLinear, 1};
  EXPECT_FALSE(fitCombo(s, only("FP16, INT32, FP16"), {f32, i64}, {f32}, {-1}, fp16).types);
}

TEST(ComboFit, FormatsCountReformatsAtTheirRankAndAliasesShareFormats) {
  const OpSchema s = twoInOneOut();
  const ComboSlot x4{DataType::kFloat32, Format::kLinear, 4},
      x2{DataType::kFloat32, Format::kLinear, 2};
  ComboFit f = fitCombo(s, only("FP32, FP32, FP32", "HWC"), {x4, x2}, {x4}, {-1});
  EXPECT_TRUE(f.fits());
  EXPECT_EQ(f.input_reformats, 1);  // rank 2 sees HWC as LINEAR
  EXPECT_EQ(f.output_reformats, 1);
  const ComboSlot h4{DataType::kFloat32, Format::kHWC, 4};
  EXPECT_EQ(fitCombo(s, only("FP32, FP32, FP32", "HWC"), {h4, x2}, {h4}, {-1}).input_reformats, 0);
  // Output 0 aliases input 0: their formats must agree.
  EXPECT_FALSE(
      fitCombo(s, only("FP32, FP32, FP32", "LINEAR, LINEAR, HWC"), {x4, x2}, {x4}, {0}).aliases);
  EXPECT_TRUE(
      fitCombo(s, only("FP32, FP32, FP32", "HWC, LINEAR, HWC"), {x4, x2}, {x4}, {0}).aliases);
}

// Attribute text (messages and timing-cache keys) reads back to the same value, whatever the
// locale: the shortest round-trip form of std::to_chars.
TEST(AttrMap, AttributeTextRoundTripsNumbers) {
  EXPECT_EQ(attrToString(AttrValue(0.5)), "0.5");
  EXPECT_EQ(attrToString(AttrValue(1e-5)), "1e-05");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(attrToString(AttrValue(third))), third);
  EXPECT_NE(attrToString(AttrValue(1e-5)), attrToString(AttrValue(std::nextafter(1e-5, 1.0))));
  EXPECT_EQ(attrToString(AttrValue(std::vector<float>{0.25f, -2.f})), "[0.25, -2]");
  EXPECT_EQ(attrToString(AttrValue(std::vector<int8_t>{-3, 7})), "[-3, 7]");
  EXPECT_EQ(attrToString(AttrValue(std::vector<bool>{true, false})), "[true, false]");
  EXPECT_EQ(attrToString(AttrValue(std::vector<int64_t>{1, 2, 3}), 2), "[1, 2, ... (3 values)]");
}
