// example::circ_pad_plugin_grad — the backward of example::circ_pad_plugin: the gradient of x is
// the sum of the output gradient over every output position that wraps onto it.
// Spec: README.md beside this file.
#include "../../common/dtype_dispatch.h"
#include "../circ_pad/circ_pad.h"

namespace opforge::contrib {

namespace {
template <typename F>
Status visitPadGradType(DataType t, F&& f) {
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
      return Status::unsupported("circ_pad_plugin_grad does not support " + dtypeName(t));
  }
}

// Scatter-add in float64 over the output positions, one rounding at the end.
Status circPadGradReference(KernelContext& ctx, std::span<const Tensor> in,
                            std::span<const Tensor> out) {
  const Tensor &dy = in[0], &dx = out[0];
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), dx.desc.dims);
  const int r = g.rank;
  const auto in_strides = ops::stridesOf(g.in_dims);
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  return visitPadGradType(dy.desc.dtype, [&](auto num) -> Status {
    using N = decltype(num);
    const auto* py = static_cast<const typename N::S*>(dy.data);
    auto* px = static_cast<typename N::S*>(dx.data);
    std::vector<int64_t> idx(r, 0);
    for (int64_t i = 0; i < dy.numel(); ++i) {
      int64_t off = 0;
      for (int a = 0; a < r; ++a)
        off += circSource(idx[a], g.before[a], g.in_dims[a]) * in_strides[a];
      acc[off] += static_cast<double>(N::load(py[i]));
      for (int a = r - 1; a >= 0; --a) {
        if (++idx[a] < g.out_dims[a]) break;
        idx[a] = 0;
      }
    }
    for (size_t i = 0; i < acc.size(); ++i) px[i] = N::store(static_cast<typename N::C>(acc[i]));
    return Status::ok();
  });
}
}  // namespace

OPFORGE_OP(circ_pad_grad, "example::circ_pad_plugin_grad")
    .doc(
        "Gradient of example::circ_pad_plugin: sums the output gradient over the positions that "
        "wrap onto each input.")
    .input("dy", "gradient of the padded output")
    .output("dx", "gradient of the input: dy's shape minus the pads")
    .attr<std::vector<int32_t>>("pads", "the forward op's pads")
    .check([](const AttrMap& a) -> Status {
      auto pads = a.get<std::vector<int32_t>>("pads");
      if (pads.empty() || pads.size() % 2 != 0)
        return Status::invalid("attribute 'pads' must have an even, non-zero length; got " +
                               std::to_string(pads.size()) + " values");
      for (size_t i = 0; i < pads.size(); ++i)
        if (pads[i] < 0)
          return Status::invalid("attribute 'pads' value " + std::to_string(pads[i]) +
                                 " at index " + std::to_string(i) + " is negative");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      auto pads = c.attr<std::vector<int32_t>>("pads");
      SymDesc dx = c.input(0).like();
      const int n = dx.rank();
      if (static_cast<int>(pads.size() / 2) > n)
        return c.error("attribute 'pads' pads " + std::to_string(pads.size() / 2) +
                       " dimensions but dy has rank " + std::to_string(n));
      for (size_t i = 0; i < pads.size() / 2; ++i) {
        const int d = n - 1 - static_cast<int>(i);
        const int64_t p = int64_t{pads[2 * i]} + pads[2 * i + 1];
        if (p == 0) continue;
        if (dx.dim(d).isConst() && dx.dim(d).constValue() <= p)
          return c.error("dimension " + std::to_string(d) + " of dy (" +
                         std::to_string(dx.dim(d).constValue()) + ") must exceed its pads (" +
                         std::to_string(p) + "): the padded input dimension must not be empty");
        dx.dim(d) = dx.dim(d) - p;
        if (!dx.dim(d).isConst())
          c.require(1, DimAssertion::Op::kLe, dx.dim(d),
                    "dimension " + std::to_string(d) + " of dy must exceed its pads");
      }
      return dx;
    })
    .combos("FP32|FP16|BF16|FP64, FP32|FP16|BF16|FP64")
    .cpu(circPadGradReference);

}  // namespace opforge::contrib
