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
