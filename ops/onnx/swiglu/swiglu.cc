// ONNX SwiGLU (opset 28): Y = Swish_alpha(A) * B = A * sigmoid(alpha * A) * B, elementwise; A and
// B have one shape and one float type (no broadcasting). Computed in double.
#include "swiglu.h"

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(SwiGLU, "ai.onnx::SwiGLU")
    .doc("Gated activation: A * sigmoid(alpha * A) * B.")
    .input("A", "the gate")
    .input("B", "the value, A's shape and type")
    .output("Y")
    .attr<double>("alpha", 1.0, "scales the gate inside the sigmoid")
    .check([](const AttrMap& a) -> Status {
      if (!std::isfinite(a.get<double>("alpha"))) return Status::invalid("alpha must be finite");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, kFloats));
      if (b.dtype != a.dtype)
        return c.error("inputs 'A' and 'B' must have one type, got " + dtypeName(a.dtype) +
                       " and " + dtypeName(b.dtype));
      if (a.rank() != b.rank())
        return c.error("inputs 'A' " + toString(a.dims) + " and 'B' " + toString(b.dims) +
                       " must have one shape (SwiGLU does not broadcast)");
      for (int i = 0; i < a.rank(); ++i)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, b.dim(i), a.dim(i),
                      "inputs 'A' and 'B' must have one shape (axis " + std::to_string(i) + ")"));
      return a.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const double alpha = k.attr<double>("alpha");
      return visitTypes<kFloats>(in[0].desc.dtype, "SwiGLU", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto *pa = ptrOf<N>(in[0]), *pb = ptrOf<N>(in[1]);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t i = 0; i < in[0].numel(); ++i)
          py[i] = N::store(static_cast<C>(swiglu(N::load(pa[i]), N::load(pb[i]), alpha)));
        return Status::ok();
      });
    });

}  // namespace opforge::ops
