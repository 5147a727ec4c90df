// sample::elemwise_add_plugin_: y = x + delta, in place, FP32 and FP16.
#include <gtest/gtest.h>

#include "graph/graph.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

TEST(ElemwiseAddInplace, AddsDeltaInPlace) {
  std::mt19937_64 rng(3);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    for (int64_t delta : {int64_t{-3}, int64_t{0}, int64_t{7}}) {
      TensorValue x = randomTensor(t, {3, 5, 7}, rng);
      checkOp(contribRegistry(), "sample::elemwise_add_plugin_", {{"delta", delta}}, {x});
      auto r = runKernel(*contribRegistry(), "sample::elemwise_add_plugin_", {{"delta", delta}},
                         {x}, 0xff);
      ASSERT_TRUE(r.isOk());
      TensorValue want = x;
      for (int64_t i = 0; i < x.desc.numel(); ++i)
        storeFromDouble(want.data.data(), t, i,
                        loadAsDouble(x.data.data(), t, i) + static_cast<double>(delta));
      EXPECT_TRUE(allClose(r->outputs[0], want));
    }
  }
}

TEST(ElemwiseAddInplace, OutputAliasesTheInput) {
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {4});
  auto y = net.addOp("sample::elemwise_add_plugin_", {x}, {{"delta", int64_t{1}}});
  ASSERT_TRUE(y.isOk());
  EXPECT_EQ(net.graph().nodes[0].aliases[0], 0);
}
