// The GPU test cases of example::non_zero_plugin, run by opforge_gpu_tests (tests/op_cases.h):
// shapes with no, half and nearly all elements zero (and a NaN, which counts as non-zero),
// compared exactly.
#include <cmath>

#include "op_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> nonZeroCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (auto dims :
       std::vector<std::vector<int64_t>>{{37, 61}, {1, 1}, {0, 5}, {64, 1000}, {3, 4097}}) {
    for (double zeros : {0.5, 0.0, 0.97}) {
      TensorValue x = randomTensor(c.types[0], dims, rng, -3, 3);
      std::uniform_real_distribution<double> u(0, 1);
      for (int64_t i = 0; i < x.desc.numel(); ++i) {
        if (u(rng) < zeros)
          storeFromDouble(x.data.data(), x.desc.dtype, i, 0.0);
        else if (x.desc.dtype != DataType::kBool &&
                 loadAsDouble(x.data.data(), x.desc.dtype, i) == 0)
          storeFromDouble(x.data.data(), x.desc.dtype, i, 1.0);
        else if (x.desc.dtype == DataType::kBool)
          storeFromDouble(x.data.data(), x.desc.dtype, i, 1.0);
      }
      if (isFloatType(x.desc.dtype) && x.desc.numel() > 2)
        storeFromDouble(x.data.data(), x.desc.dtype, 1, NAN);
      out.push_back({"x" + dimsToString(dims) + " zeros " + std::to_string(zeros),
                     {},
                     {x},
                     {exact(), exact()}});
    }
  }
  return out;
}
OPFORGE_CONTRIB_CASES(nonZeroCases, "example::non_zero_plugin");

}  // namespace
}  // namespace opforge::test::cases
