#include <gtest/gtest.h>

#include <cmath>

#include "common/wire.h"

using namespace opforge;

TEST(Wire, AttributeValuesRoundTrip) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kInt32, {2}};
  t.data = {1, 0, 0, 0, 2, 0, 0, 0};
  std::vector<AttrValue> values = {int64_t{-5},
                                   2.5,
                                   std::string("abc"),
                                   true,
                                   Bytes{{1, 2, 3}},
                                   std::vector<int8_t>{-1, 2},
                                   std::vector<int16_t>{300},
                                   std::vector<int32_t>{1, 2, 3},
                                   std::vector<int64_t>{int64_t{1} << 40},
                                   std::vector<half>{half{floatToHalf(1.5f)}},
                                   std::vector<float>{0.5f},
                                   std::vector<double>{1e300},
                                   std::vector<bool>{true, false, true},
                                   t};
  for (const auto& v : values) {
    wire::Writer w;
    wire::put(w, v);
    wire::Reader r(w.buffer().data(), w.size(), "test");
    AttrValue back = wire::getAttrValue(r);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r.atEnd());
    EXPECT_EQ(attrToString(back), attrToString(v));
    EXPECT_EQ(back.index(), v.index());
  }
}

// Found by tests/fuzz wire_fuzzer: an attribute map of one empty-named empty value (9 bytes after
// its count) encoded, but its decoder asked for at least 10 bytes per attribute.
TEST(Wire, TheSmallestAttributeMapRoundTrips) {
  AttrMap m;
  m.set("", std::monostate{});
  wire::Writer w;
  wire::put(w, m);
  EXPECT_EQ(w.size(), 8u + 9u);
  wire::Reader r(w.buffer().data(), w.size(), "test");
  AttrMap back = wire::getAttrMap(r);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.atEnd());
  EXPECT_EQ(back.all().size(), 1u);
}

TEST(Wire, DimExprRoundTrip) {
  DimExpr e = floorDiv(DimExpr::symbol("x.0") * 3 + 1, DimExpr::symbol("y.2"));
  wire::Writer w;
  wire::put(w, e);
  wire::Reader r(w.buffer().data(), w.size(), "test");
  DimExpr back = wire::getDimExpr(r);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(back.sameAs(e));
}

TEST(Wire, TruncatedDataIsAnErrorNotACrash) {
  wire::Writer w;
  w.str("hello world");
  w.u64(7);
  for (size_t cut = 0; cut < w.size(); ++cut) {
    wire::Reader r(w.buffer().data(), cut, "cut");
    (void)r.str();
    (void)r.u64();
    EXPECT_FALSE(r.ok()) << cut;
    EXPECT_NE(r.status().message().find("cut"), std::string::npos);
  }
}

TEST(Wire, HugeCountsAreRejected) {
  wire::Writer w;
  w.u64(uint64_t{1} << 60);  // a list length far beyond the data
  wire::Reader r(w.buffer().data(), w.size(), "counts");
  auto dims = wire::getDims(r);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(dims.empty());
}

namespace {
wire::ShapeQuery sampleQuery(const TensorValue& shape) {
  wire::ShapeQuery q;
  q.node = "reshape_1";
  q.key = "ai.onnx::Reshape";
  q.symbol_prefix = "reshape_1#";
  q.attrs.set("allowzero", int64_t{1});
  InferInput data;
  data.present = true;
  data.desc = SymDesc::make(DataType::kFloat32, {DimExpr::symbol("x.0"), 6});
  InferInput omitted;  // an omitted optional input
  InferInput value;
  value.present = true;
  value.desc = SymDesc::make(DataType::kInt64, {2});
  value.value = std::vector<DimExpr>{DimExpr::symbol("x.0") * 2, 3};
  value.constant = &shape;
  q.inputs = {data, omitted, value};
  return q;
}

InferResult sampleAnswer() {
  InferResult a;
  a.outputs.push_back(SymDesc::make(DataType::kFloat32, {DimExpr::symbol("n#0"), 4}));
  a.outputs.back().alias = 0;
  SymDesc count = SymDesc::make(DataType::kInt64, {});
  count.size_tensor = 0;
  a.outputs.push_back(count);
  a.size_tensors.push_back(
      {"n#0", floorDiv(DimExpr::symbol("x.0"), 2), DimExpr::symbol("x.0"), DataType::kInt64, -1});
  a.values.emplace_back(0, std::vector<DimExpr>{DimExpr::symbol("x.0"), 4});
  a.assertions.push_back({DimExpr::symbol("x.0"), DimAssertion::Op::kLe, 64, "x.0 must fit"});
  return a;
}

std::string text(const SymDesc& d) {
  return dtypeName(d.dtype) + toString(d.dims) + " alias " + std::to_string(d.alias) + " size " +
         std::to_string(d.size_tensor);
}
}  // namespace

TEST(Wire, ShapeQueryRoundTrips) {
  TensorValue shape;
  shape.desc = TensorDesc{DataType::kInt64, {2}};
  shape.data.assign(16, 0);
  shape.data[0] = 4;
  shape.data[8] = 3;
  wire::Writer w;
  wire::put(w, sampleQuery(shape));
  wire::Reader r(w.buffer().data(), w.size(), "query");
  wire::ShapeQuery q = wire::getShapeQuery(r);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.atEnd());
  EXPECT_EQ(q.node, "reshape_1");
  EXPECT_EQ(q.key, "ai.onnx::Reshape");
  EXPECT_EQ(q.symbol_prefix, "reshape_1#");
  EXPECT_EQ(q.attrs.get<int64_t>("allowzero"), 1);
  ASSERT_EQ(q.inputs.size(), 3u);
  EXPECT_TRUE(q.inputs[0].present);
  EXPECT_EQ(text(q.inputs[0].desc), "FP32[x.0, 6] alias -1 size -1");
  EXPECT_FALSE(q.inputs[0].value.has_value());
  EXPECT_EQ(q.inputs[0].constant, nullptr);
  EXPECT_FALSE(q.inputs[1].present);
  ASSERT_TRUE(q.inputs[2].value.has_value());
  EXPECT_EQ(toString(*q.inputs[2].value), toString(*sampleQuery(shape).inputs[2].value));
  ASSERT_NE(q.inputs[2].constant, nullptr);  // owned by the decoded query
  EXPECT_NE(q.inputs[2].constant, &shape);
  EXPECT_EQ(q.inputs[2].constant->data, shape.data);
  EXPECT_EQ(q.inputs[2].constant->desc.dims, shape.desc.dims);
  // Moving the query keeps the constant's address valid.
  wire::ShapeQuery moved = std::move(q);
  EXPECT_EQ(moved.inputs[2].constant, &moved.constants.front());
}

TEST(Wire, ShapeAnswerRoundTrips) {
  const InferResult a = sampleAnswer();
  wire::Writer w;
  wire::put(w, a);
  wire::Reader r(w.buffer().data(), w.size(), "answer");
  InferResult b = wire::getShapeAnswer(r);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.atEnd());
  ASSERT_EQ(b.outputs.size(), 2u);
  EXPECT_EQ(text(b.outputs[0]), "FP32[n#0, 4] alias 0 size -1");
  EXPECT_EQ(text(b.outputs[1]), "INT64[] alias -1 size 0");
  ASSERT_EQ(b.size_tensors.size(), 1u);
  EXPECT_EQ(b.size_tensors[0].symbol, "n#0");
  EXPECT_TRUE(b.size_tensors[0].opt.sameAs(a.size_tensors[0].opt));
  EXPECT_TRUE(b.size_tensors[0].upper.sameAs(a.size_tensors[0].upper));
  EXPECT_EQ(b.size_tensors[0].dtype, DataType::kInt64);
  EXPECT_EQ(b.size_tensors[0].output, -1);  // settled by the engine, not encoded
  ASSERT_EQ(b.values.size(), 1u);
  EXPECT_EQ(b.values[0].first, 0);
  EXPECT_EQ(toString(b.values[0].second), toString(a.values[0].second));
  ASSERT_EQ(b.assertions.size(), 1u);
  EXPECT_EQ(b.assertions[0].op, DimAssertion::Op::kLe);
  EXPECT_TRUE(b.assertions[0].rhs.sameAs(64));
  EXPECT_EQ(b.assertions[0].message, "x.0 must fit");
}

// Every cut of a query or an answer is an error naming the buffer, never a crash or a partial
// success.
TEST(Wire, TruncatedShapeQueriesAndAnswersAreErrors) {
  TensorValue shape;
  shape.desc = TensorDesc{DataType::kInt64, {2}};
  shape.data.assign(16, 1);
  wire::Writer q, a;
  wire::put(q, sampleQuery(shape));
  wire::put(a, sampleAnswer());
  for (size_t cut = 0; cut < q.size(); ++cut) {
    wire::Reader r(q.buffer().data(), cut, "cut query");
    (void)wire::getShapeQuery(r);
    EXPECT_FALSE(r.ok()) << cut;
    EXPECT_NE(r.status().message().find("cut query"), std::string::npos) << r.status().message();
  }
  for (size_t cut = 0; cut < a.size(); ++cut) {
    wire::Reader r(a.buffer().data(), cut, "cut answer");
    (void)wire::getShapeAnswer(r);
    EXPECT_FALSE(r.ok()) << cut;
    EXPECT_NE(r.status().message().find("cut answer"), std::string::npos) << r.status().message();
  }
}

TEST(Wire, ListCodecsRoundTripAndRefuseHugeCounts) {
  wire::Writer w;
  const std::vector<int32_t> ints = {1, -2, 3};
  const std::vector<std::string> names = {"a", "", "ccc"};
  wire::putScalars(w, ints);
  wire::putList(w, names, [](wire::Writer& w, const std::string& s) { w.str(s); });
  wire::Reader r(w.buffer().data(), w.size(), "lists");
  EXPECT_EQ(wire::getScalars<int32_t>(r, "ints"), ints);
  EXPECT_EQ(wire::getList(r, wire::kMinStrBytes, "names", [](wire::Reader& r) { return r.str(); }),
            names);
  EXPECT_TRUE(r.ok() && r.atEnd());
  wire::Writer huge;
  huge.u64(uint64_t{1} << 40);
  huge.u64(0);
  wire::Reader h(huge.buffer().data(), huge.size(), "huge");
  EXPECT_TRUE(wire::getList(h, wire::kMinStrBytes, "names", [](wire::Reader& r) {
                return r.str();
              }).empty());
  EXPECT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("count of names"), std::string::npos) << h.status().message();
}

TEST(Wire, ChecksumSeesEveryByte) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  const uint64_t h = wire::checksum(data.data(), data.size());
  for (size_t i = 0; i < data.size(); i += 37) {
    data[i] ^= 0x10;
    EXPECT_NE(wire::checksum(data.data(), data.size()), h) << i;
    data[i] ^= 0x10;
  }
}

TEST(Half, ConversionsRoundToNearestEven) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.1f})
    EXPECT_EQ(halfToFloat(floatToHalf(f)), f == 0.1f ? 0.099975586f : f);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);  // overflow to +inf
  EXPECT_EQ(floatToHalf(-1e6f), 0xfc00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.f)), 1.f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.00390625f)), 1.f);  // ties to even
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

TEST(Wire, SchemaKeepsTf32TacticsShapeInputsAndTheLayerKind) {
  OpDef d("t::conv_like");
  d.input("x").shapeInput("k", true).output("y").kind("conv");
  d.tactic(1, "cuda.exact", {}).tf32Tactic(2, "cuda.tf32", {});
  wire::Writer w;
  wire::put(w, d.schema());
  wire::Reader r(w.buffer().data(), w.size(), "test");
  OpSchema s = wire::getSchema(r);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.atEnd());
  ASSERT_EQ(s.tactics.size(), 2u);
  EXPECT_FALSE(s.tactics[0].tf32);
  EXPECT_TRUE(s.tactics[1].tf32);
  EXPECT_EQ(s.tactics[1].backend, Backend::kCuda);
  EXPECT_EQ(s.kind, "conv");
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_FALSE(s.inputs[0].shape_only);
  EXPECT_TRUE(s.inputs[1].shape_only && s.inputs[1].value && s.inputs[1].optional);
  EXPECT_EQ(s.layerKind(), "conv");
  OpDef e("t::add_like");
  e.elementwise();
  EXPECT_EQ(e.schema().layerKind(), "elementwise");
  EXPECT_EQ(OpDef("t::plain").schema().layerKind(), "other");
}
