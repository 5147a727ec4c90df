// The GPU test cases of opforge::DeformableAggregationGrad, run by opforge_gpu_tests
// (tests/op_cases.h): DeformableAggregation's problems up to 256 channels, with samplingTolerance
// (the location gradients, which scale with H and W, 2e-4 / 1e-3).
#include "op_cases.h"
#include "ops/contrib/deformable_aggregation/deformable_aggregation_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> daGradCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (auto p : daProblems(c.types[0])) {
    if (p.C > 256) continue;  // the float64 reference gradient of the wide case is slow on the host
    auto in = makeDaInputs(p, rng);
    in.push_back(randomTensor(c.types[0], {p.B, p.A, p.C}, rng, -1, 1));
    out.push_back(
        {daName(p),
         {},
         in,
         {samplingTolerance(c.types[0]), {2e-4, 1e-3}, samplingTolerance(DataType::kFloat32)}});
  }
  return out;
}
OPFORGE_CONTRIB_CASES(daGradCases, "opforge::DeformableAggregationGrad");

}  // namespace
}  // namespace opforge::test::cases
