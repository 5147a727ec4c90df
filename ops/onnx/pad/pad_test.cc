// ai.onnx::Pad's CPU reference (row by row: the interior of each row one memcpy) against a
// per-element formulation written here, on random shapes, pads (negative ones crop) and all four
// modes; and reflect's limit (at most size - 1 per side) on a dynamic axis, which the shape rule
// records as a run-time assertion (a fuzzer finding: an unchecked reflect pad of 10^6 on an axis
// of 1 made an output of 10^8 elements).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

// The source index of output coordinate j on an axis of size d with begin pad b, or -1 (the
// constant). Reflect steps back and forth instead of the kernel's modular form.
int64_t naiveSource(int64_t j, int64_t b, int64_t d, const std::string& mode) {
  int64_t q = j - b;
  if (q >= 0 && q < d) return q;
  if (mode == "constant") return -1;
  if (mode == "edge") return q < 0 ? 0 : d - 1;
  if (mode == "wrap") return ((q % d) + d) % d;
  if (d == 1) return 0;
  while (q < 0 || q >= d) q = q < 0 ? -q : 2 * (d - 1) - q;
  return q;
}

std::vector<double> naivePad(const TensorValue& x, const std::vector<int64_t>& pads,
                             const std::string& mode, double value, std::vector<int64_t>* ydims) {
  const std::vector<double> xv = toDoubles(x);
  const auto& xd = x.desc.dims;
  const int r = static_cast<int>(xd.size());
  ydims->clear();
  int64_t n = 1;
  for (int a = 0; a < r; ++a) {
    ydims->push_back(xd[a] + pads[a] + pads[a + r]);
    n *= ydims->back();
  }
  std::vector<double> y(n);
  for (int64_t o = 0; o < n; ++o) {
    int64_t rem = o, src = 0, stride = 1;
    bool constant = false;
    for (int a = r - 1; a >= 0; --a) {
      const int64_t j = rem % (*ydims)[a];
      rem /= (*ydims)[a];
      const int64_t s = naiveSource(j, pads[a], xd[a], mode);
      constant |= s < 0;
      src += s * stride;
      stride *= xd[a];
    }
    y[o] = constant ? value : xv[src];
  }
  return y;
}

}  // namespace

TEST(Pad, RowWiseReferenceMatchesAPerElementPad) {
  std::mt19937_64 rng(20261205);
  const char* modes[] = {"constant", "reflect", "edge", "wrap"};
  int cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::string mode = modes[trial % 4];
    const int r = 1 + static_cast<int>(rng() % 4);
    std::vector<int64_t> dims(r), pads(2 * r);
    for (int a = 0; a < r; ++a) {
      dims[a] = static_cast<int64_t>(rng() % 5) + (mode == "constant" ? 0 : 1);
      for (int side : {0, 1}) {
        int64_t p = static_cast<int64_t>(rng() % 6) - 2;  // -2..3
        if (mode == "reflect") p = std::min(p, dims[a] - 1);
        pads[a + side * r] = p;
      }
      // Crops never below zero.
      if (dims[a] + pads[a] + pads[a + r] < 0) pads[a] = pads[a + r] = 0;
    }
    const bool ints = trial % 3 == 0;
    TensorValue x = randomTensor(ints ? DataType::kInt64 : DataType::kFloat32, dims, rng);
    std::vector<TensorValue> in{x, fromInt64s({2 * r}, pads)};
    const double value = ints ? 7 : 2.5;
    if (mode == "constant") {
      TensorValue v = ints ? fromInt64s({}, {7}) : fromFloats({}, {2.5f});
      in.push_back(v);
    }
    auto run =
        runKernel(*Registry::global(), "ai.onnx::Pad", {{"mode", std::string(mode)}}, in, 0xA5);
    ASSERT_TRUE(run.isOk()) << mode << " " << describeTensor(x) << ": " << run.status().message();
    std::vector<int64_t> ydims;
    const auto want = naivePad(x, pads, mode, value, &ydims);
    const TensorValue& y = run->outputs[0];
    ASSERT_EQ(y.desc.dims, ydims) << mode;
    const auto got = toDoubles(y);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << mode << " x " << describeTensor(x) << " element " << i;
    ++cases;
  }
  EXPECT_EQ(cases, 400);
}

TEST(Pad, ReflectBeyondADynamicAxisIsRefusedAtItsShapes) {
  auto build = [](int64_t min_rows) {
    NetworkDefinition net(Registry::global());
    auto x = *net.addInput("x", DataType::kFloat32, {-1, 4});
    auto p = *net.addConstant("p", fromInt64s({4}, {2, 0, 0, 0}));
    auto y = net.addOp("ai.onnx::Pad", {x, p}, {{"mode", std::string("reflect")}}, "pad");
    EXPECT_TRUE(y.isOk()) << y.status().message();
    EXPECT_TRUE(net.markOutput((*y)[0], "y").isOk());
    BuilderConfig cfg;
    cfg.profiles.push_back(
        OptimizationProfile{}.set("x", {min_rows, 4}, {min_rows, 4}, {min_rows + 4, 4}));
    return Builder(Registry::global()).buildSerializedNetwork(net, cfg);
  };
  // Rows >= 3 allow a reflect pad of 2; a profile down to 2 rows does not.
  ASSERT_TRUE(build(3).isOk()) << build(3).status().message();
  expectError(build(2).status(),
              {"node 'pad'", "ai.onnx::Pad", "mode 'reflect' pads at most size - 1 per side"});
}
