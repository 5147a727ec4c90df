// The GPU test cases of opforge::DeformableAggregation, run by opforge_gpu_tests
// (tests/op_cases.h): every problem of daProblems(), with samplingTolerance.
#include "ops/contrib/deformable_aggregation/deformable_aggregation_cases.h"

#include "op_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> daCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& p : daProblems(c.types[0]))
    out.push_back({daName(p), {}, makeDaInputs(p, rng), {samplingTolerance(c.types[0])}});
  return out;
}
OPFORGE_CONTRIB_CASES(daCases, "opforge::DeformableAggregation");

}  // namespace
}  // namespace opforge::test::cases
