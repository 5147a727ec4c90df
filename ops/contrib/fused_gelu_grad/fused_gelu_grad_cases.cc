// The GPU test cases of opforge::FusedGeluGrad, run by opforge_gpu_tests (tests/op_cases.h):
// every attribute set of FusedGelu's cases, with the harness's per-dtype tolerance.
#include "op_cases.h"
#include "ops/contrib/fused_gelu/fused_gelu_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> geluGradCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& a : geluAttrs())
    for (int64_t n : {1, 7, 1023, 4096 + 5})
      out.push_back(
          {std::string(a.name) + " n " + std::to_string(n),
           a.attrs,
           {randomTensor(c.types[0], {n}, rng, -4, 4), randomTensor(c.types[1], {n}, rng, -1, 1)},
           {}});
  return out;
}
OPFORGE_CONTRIB_CASES(geluGradCases, "opforge::FusedGeluGrad");

}  // namespace
}  // namespace opforge::test::cases
