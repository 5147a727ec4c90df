// The GPU test cases of example::circ_pad_plugin, run by opforge_gpu_tests (tests/op_cases.h):
// every shape of padShapes(), compared exactly (the op copies).
#include "ops/contrib/circ_pad/circ_pad_cases.h"

#include "op_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> circPadCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& s : padShapes())
    out.push_back({"x" + dimsToString(s.dims),
                   {{"pads", s.pads}},
                   {randomTensor(c.types[0], s.dims, rng, -3, 3)},
                   {exact()}});
  return out;
}
OPFORGE_CONTRIB_CASES(circPadCases, "example::circ_pad_plugin");

}  // namespace
}  // namespace opforge::test::cases
