// The GPU test cases of opforge::FusedGelu, run by opforge_gpu_tests (tests/op_cases.h): every
// attribute set of geluAttrs() on lengths around the vector width, with the harness's per-dtype
// tolerance.
#include "ops/contrib/fused_gelu/fused_gelu_cases.h"

#include "op_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> geluCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& a : geluAttrs())
    for (int64_t n : {1, 5, 1023, 4096 + 7, 65536})
      out.push_back({std::string(a.name) + " n " + std::to_string(n),
                     a.attrs,
                     {randomTensor(c.types[0], {n}, rng, -6, 6)},
                     {}});
  return out;
}
OPFORGE_CONTRIB_CASES(geluCases, "opforge::FusedGelu");

}  // namespace
}  // namespace opforge::test::cases
