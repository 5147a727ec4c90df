// newop_ns::newop_name — its definition (OPFORGE_OP) and CPU reference, the oracle every other
// tactic is compared with. Spec: README.md beside this file.
//
// Written by `opforge new-op`: the skeleton's reference is the identity (y = x, FP32). Replace it
// with the op's math, its inputs, attributes, shape function and type combinations, and the test
// (newop_name_test.cc) with the formula; then the CUDA tactic (newop_name.cu, if there is one).
#include <cstring>
#include <string>

#include "opforge/op.h"

namespace newop_ns {
namespace {
using namespace opforge;

// The CPU reference: y = x (TODO: the op's math).
Status reference(KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  if (x.desc.dtype != DataType::kFloat32)
    return Status::unsupported("newop_ns::newop_name does not support " +
                               std::string(dtypeName(x.desc.dtype)));
  const auto* px = static_cast<const float*>(x.data);
  auto* py = static_cast<float*>(y.data);
  for (int64_t i = 0; i < y.numel(); ++i) py[i] = px[i];
  return Status::ok();
}
}  // namespace

OPFORGE_OP(newop_ns_newop_name, "newop_ns::newop_name")
    .doc("TODO: what newop_ns::newop_name computes (the skeleton: y = x).")
    .input("x", "any shape")
    .output("y", "the shape and type of x")
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
    .combos("FP32, FP32")
    .cpu(reference);

}  // namespace newop_ns
