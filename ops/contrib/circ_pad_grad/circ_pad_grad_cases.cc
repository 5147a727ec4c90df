// The GPU test cases of example::circ_pad_plugin_grad, run by opforge_gpu_tests
// (tests/op_cases.h): the gradient of every shape of circ_pad's cases, with the harness's
// per-dtype tolerance (the wrapped positions are sums).
#include "op_cases.h"
#include "ops/contrib/circ_pad/circ_pad_cases.h"

namespace opforge::test::cases {
namespace {

std::vector<GpuCase> circPadGradCases(const ConcreteCombo& c, std::mt19937_64& rng) {
  std::vector<GpuCase> out;
  for (const auto& s : padShapes()) {
    std::vector<int64_t> dy = s.dims;
    for (size_t i = 0; i < s.pads.size() / 2; ++i)
      dy[dy.size() - 1 - i] += s.pads[2 * i] + s.pads[2 * i + 1];
    out.push_back({"dy" + dimsToString(dy),
                   {{"pads", s.pads}},
                   {randomTensor(c.types[0], dy, rng, -1, 1)},
                   {}});
  }
  return out;
}
OPFORGE_CONTRIB_CASES(circPadGradCases, "example::circ_pad_plugin_grad");

}  // namespace
}  // namespace opforge::test::cases
