// The GPU test cases of sample::elemwise_add_plugin_, run by opforge_gpu_tests
// (tests/op_cases.h): lengths around the vector width and a 4-D tensor, with the harness's
// per-dtype tolerance.
#include "op_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> addCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (int64_t n : {1, 3, 4, 8, 1000, 4096 + 7, 100003})
    for (int64_t delta : {-3, 7})
      out.push_back({"n " + std::to_string(n) + " delta " + std::to_string(delta),
                     {{"delta", delta}},
                     {randomTensor(c.types[0], {n}, rng, -50, 50)},
                     {}});
  out.push_back({"x 2x3x5x7",
                 {{"delta", int64_t{2}}},
                 {randomTensor(c.types[0], {2, 3, 5, 7}, rng, -5, 5)},
                 {}});
  return out;
}
OPFORGE_CONTRIB_CASES(addCases, "sample::elemwise_add_plugin_");

}  // namespace
}  // namespace opforge::test::cases
