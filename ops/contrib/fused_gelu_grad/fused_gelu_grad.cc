// opforge::FusedGeluGrad — the backward of opforge::FusedGelu: dx = dy * d chain(x) / dx.
// Spec: README.md beside this file.
#include "../../common/dtype_dispatch.h"
#include "../../core/fused_gelu/gelu_reference.h"
#include "../fused_gelu/fused_gelu.h"

namespace opforge::contrib {

namespace {
template <typename F>
Status visitGeluGradType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32:
      return f(ops::Num<float>{});
    case DataType::kFloat16:
      return f(ops::Num<half>{});
    case DataType::kBFloat16:
      return f(ops::Num<bfloat16>{});
    case DataType::kFloat64:
      return f(ops::Num<double>{});
    default:
      return Status::unsupported("FusedGeluGrad does not support " + dtypeName(t));
  }
}

Status fusedGeluGradReference(KernelContext& ctx, std::span<const Tensor> in,
                              std::span<const Tensor> out) {
  const GeluStages s = geluStages(ctx.attrs());
  return visitGeluGradType(in[0].desc.dtype, [&](auto num) -> Status {
    using N = decltype(num);
    const auto* x = static_cast<const typename N::S*>(in[0].data);
    const auto* dy = static_cast<const typename N::S*>(in[1].data);
    auto* dx = static_cast<typename N::S*>(out[0].data);
    const int64_t n = in[0].numel();
    for (int64_t i = 0; i < n; ++i) {
      const double g = static_cast<double>(N::load(dy[i])) *
                       stagesGradReference(s, static_cast<double>(N::load(x[i])));
      dx[i] = N::store(static_cast<typename N::C>(g));
    }
    return Status::ok();
  });
}
}  // namespace

OPFORGE_OP(fused_gelu_grad, "opforge::FusedGeluGrad")
    .doc("Gradient of opforge::FusedGelu: dx = dy * (d chain / dx)(x).")
    .input("x", "the forward op's input")
    .input("dy", "gradient of the forward op's output, same shape and type as x")
    .output("dx", "gradient of x")
    .with(declareGeluAttrs)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc x = c.input(0), dy = c.input(1);
      if (x.dtype != dy.dtype)
        return c.error("x is " + dtypeName(x.dtype) + " but dy is " + dtypeName(dy.dtype));
      if (x.rank() != dy.rank())
        return c.error("x " + toString(x.dims) + " and dy " + toString(dy.dims) +
                       " must have the same shape");
      for (int d = 0; d < x.rank(); ++d) {
        if (x.dim(d).isConst() && dy.dim(d).isConst() &&
            x.dim(d).constValue() != dy.dim(d).constValue())
          return c.error("x " + toString(x.dims) + " and dy " + toString(dy.dims) +
                         " must have the same shape");
        if (!x.dim(d).sameAs(dy.dim(d)))
          c.require(x.dim(d), DimAssertion::Op::kEq, dy.dim(d),
                    "dimension " + std::to_string(d) + " of x and dy must be equal");
      }
      return x.like();
    })
    .combos("FP32|FP16|BF16|FP64, FP32|FP16|BF16|FP64, FP32|FP16|BF16|FP64")
    .cpu(fusedGeluGradReference)
    .elementwise();

}  // namespace opforge::contrib
