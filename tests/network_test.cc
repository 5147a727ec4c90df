// Node creation validates attributes and shapes at once, with messages that name node, op and
// attribute.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;

namespace {
struct Net {
  NetworkDefinition net{test::contribRegistry()};
  TensorRef x;
  explicit Net(std::vector<int64_t> dims = {2, 3, 8, 8}) {
    x = *net.addInput("x", DataType::kFloat32, dims);
  }
  Status pad(Attrs a) { return net.addOp("example::circ_pad_plugin", {x}, a, "pad0").status(); }
};
void expectMessage(const Status& st, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(st.isOk());
  for (const char* p : parts)
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "missing '" << p << "' in: " << st.message();
}
}  // namespace

TEST(Attributes, WrongTypeNamesNodeOpAndAttribute) {
  Net n;
  expectMessage(n.pad({{"pads", std::vector<float>{1.5f, 1.f}}}),
                {"node 'pad0'", "example::circ_pad_plugin v1", "attribute 'pads'", "int32[]"});
  expectMessage(n.pad({{"pads", std::string("1,1")}}),
                {"attribute 'pads' must be int32[]", "got string"});
}

TEST(Attributes, OddLengthAndTooLongPads) {
  Net n;
  expectMessage(n.pad({{"pads", std::vector<int32_t>{1, 1, 1}}}),
                {"node 'pad0'", "even", "3 values"});
  Net r2({4, 5});
  expectMessage(r2.pad({{"pads", std::vector<int32_t>{1, 1, 1, 1, 1, 1}}}),
                {"node 'pad0'", "rank 2", "m/2 <= N"});
  expectMessage(n.pad({{"pads", std::vector<int32_t>{1, -1}}}), {"negative"});
}

TEST(Attributes, MissingUnknownAndOutOfRange) {
  Net n;
  expectMessage(n.pad({}), {"required attribute 'pads' (int32[]) is missing"});
  expectMessage(n.pad({{"pads", std::vector<int32_t>{1, 1}}, {"padz", int64_t{1}}}),
                {"unknown attribute 'padz'", "pads (int32[])"});
  expectMessage(n.pad({{"pads", std::vector<int64_t>{int64_t{1} << 40, 1}}}), {"does not fit"});
}

TEST(Attributes, ConvertibleValuesAreAccepted) {
  Net n;
  // int64 lists and 1-D tensors (what onnx-graphsurgeon writes for numpy arrays) become int32[]
  EXPECT_TRUE(n.pad({{"pads", std::vector<int64_t>{1, 1}}}).isOk());
  TensorValue t;
  t.desc = TensorDesc{DataType::kInt32, {2}};
  t.data = {1, 0, 0, 0, 2, 0, 0, 0};
  EXPECT_TRUE(n.net.addOp("example::circ_pad_plugin", {n.x}, {{"pads", t}}, "pad1").isOk());
}

TEST(Network, ShapesPropagateSymbolically) {
  NetworkDefinition net(test::contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 3, -1, 8});
  auto y = net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 2, 3, 4}}});
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(net.shapeOf((*y)[0]), "[x.0, 3, x.2+7, 11]");
  auto z = net.addOp("sample::elemwise_add_plugin_", {(*y)[0]}, {{"delta", int64_t{1}}});
  ASSERT_TRUE(z.isOk());
  EXPECT_EQ(net.shapeOf((*z)[0]), "[x.0, 3, x.2+7, 11]");
  auto a = net.addOp("ai.onnx::Add", {(*z)[0], x});
  ASSERT_FALSE(a.isOk());  // [.., x.2+7, 11] vs [.., x.2, 8]: 11 and 8 never broadcast
  EXPECT_NE(a.status().message().find("do not broadcast"), std::string::npos)
      << a.status().message();
}

TEST(Network, InputErrors) {
  NetworkDefinition net(test::contribRegistry());
  ASSERT_TRUE(net.addInput("x", DataType::kFloat32, {2}).isOk());
  EXPECT_FALSE(net.addInput("x", DataType::kFloat32, {2}).isOk());  // duplicate name
  EXPECT_FALSE(net.addInput("y", DataType::kFloat32, {-2}).isOk());
  auto nz = net.addOp("example::non_zero_plugin", {*net.findTensor("x")});
  ASSERT_FALSE(nz.isOk());
  EXPECT_NE(nz.status().message().find("must be 2-D"), std::string::npos);
  auto unknown = net.addOp("example::nope", {*net.findTensor("x")});
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.status().message().find("not registered"), std::string::npos);
  auto arity = net.addOp("ai.onnx::Add", {*net.findTensor("x")});
  ASSERT_FALSE(arity.isOk());
  EXPECT_NE(arity.status().message().find("takes 2 inputs"), std::string::npos)
      << arity.status().message();
}
