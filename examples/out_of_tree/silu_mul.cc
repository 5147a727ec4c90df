// ext::silu_mul — y = SiLU(a) * b elementwise (the gate of a SwiGLU MLP), declared once with its
// CPU reference; the CUDA tactic is in silu_mul.cu. Spec: README.md.
#include <cstdint>
#include <string>

#include "opforge/op.h"
#include "opforge/plugin_export.h"
#include "silu_mul.h"

// The library's two exported C functions (one line per library).
OPFORGE_PLUGIN_LIBRARY("ext_ops", "0.1.0");

namespace ext {
namespace {
using namespace opforge;

template <typename Load, typename Store>
void loop(const Tensor& a, const Tensor& b, const Tensor& y, Load load, Store store) {
  const auto* pa = static_cast<const uint16_t*>(a.data);
  const auto* pb = static_cast<const uint16_t*>(b.data);
  auto* py = static_cast<uint16_t*>(y.data);
  for (int64_t i = 0; i < y.numel(); ++i) py[i] = store(siluMul(load(pa[i]), load(pb[i])));
}

Status siluMulReference(KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &a = in[0], &b = in[1], &y = out[0];
  switch (a.desc.dtype) {
    case DataType::kFloat32: {
      const auto* pa = static_cast<const float*>(a.data);
      const auto* pb = static_cast<const float*>(b.data);
      auto* py = static_cast<float*>(y.data);
      for (int64_t i = 0; i < y.numel(); ++i) py[i] = siluMul(pa[i], pb[i]);
      return Status::ok();
    }
    case DataType::kFloat16:
      loop(a, b, y, halfToFloat, floatToHalf);
      return Status::ok();
    case DataType::kBFloat16:
      loop(a, b, y, bf16ToFloat, floatToBf16);
      return Status::ok();
    default:
      return Status::unsupported(std::string("ext::silu_mul does not support ") +
                                 dtypeName(a.desc.dtype));
  }
}
}  // namespace

OPFORGE_OP(silu_mul, "ext::silu_mul")
    .doc("SiLU(a) * b elementwise (a * sigmoid(a) * b): the gate of a SwiGLU MLP in one pass.")
    .input("a", "any shape")
    .input("b", "the shape of a")
    .output("y", "the shape and type of a")
    .shape([](opforge::ShapeContext& c) -> opforge::Result<opforge::SymDesc> {
      opforge::SymDesc y = c.input(0).like();
      const opforge::SymDesc b = c.input(1);
      if (b.rank() != y.rank())
        return c.error("inputs a and b must have the same shape; ranks " +
                       std::to_string(y.rank()) + " and " + std::to_string(b.rank()));
      for (int d = 0; d < y.rank(); ++d)
        c.require(y.dim(d), opforge::DimAssertion::Op::kEq, b.dim(d),
                  "inputs a and b must have the same shape (dimension " + std::to_string(d) + ")");
      return y;
    })
    .combos("FP32|FP16|BF16, FP32|FP16|BF16, FP32|FP16|BF16")
    .cpu(siluMulReference);

}  // namespace ext
