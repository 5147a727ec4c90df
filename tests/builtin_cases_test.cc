// The declarative GPU cases (ops/*/*/*_cases.cc, run by opforge_gpu_onnx_tests against each CUDA
// tactic) checked where no GPU is: every case's CPU reference runs at every one of its types and
// writes every output, so a malformed case (a shape, a type, an attribute the op refuses) shows
// here rather than in a session's GPU time. Outputs are poisoned first; an output left poisoned
// (all 0xFF bytes) fails.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "op_cases.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test::cases;

TEST(BuiltinCases, EveryCaseRunsOnTheCpuReferenceAtEveryType) {
  auto reg = Registry::global();
  std::mt19937_64 rng(11);
  int runs = 0;
  for (const Case& c : builtinCases()) {
    const std::string key = keyOf(c.op);
    if (!reg->find(key)) {
      ADD_FAILURE() << key << " is not registered";
      continue;
    }
    const std::vector<DataType> types = c.types.empty() ? std::vector<DataType>{F32} : c.types;
    for (DataType t : types) {
      std::vector<TensorValue> inputs;
      for (const auto& in : c.in) inputs.push_back(makeInput(in, t, rng));
      auto r = test::runKernel(*reg, key, c.attrs, inputs, 0xff, 0);
      const std::string label =
          key + " (" + (c.note.empty() ? "case" : c.note) + ") at " + dtypeName(t);
      if (!r) {
        ADD_FAILURE() << label << ": " << r.status().message();
        continue;
      }
      for (size_t o = 0; o < r->outputs.size(); ++o) {
        const auto& out = r->outputs[o];
        bool poisoned = !out.data.empty();
        for (uint8_t b : out.data) poisoned = poisoned && b == 0xff;
        EXPECT_FALSE(poisoned && out.desc.dtype != DataType::kUInt8 &&
                     out.desc.dtype != DataType::kInt8)
            << label << ": output " << o << " left as poisoned";
      }
      ++runs;
    }
  }
  EXPECT_GT(runs, 500);
  std::printf("%d case runs on the CPU reference\n", runs);
}
