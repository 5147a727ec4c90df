// example::circ_pad_plugin — circular padding of the last m/2 dimensions (the TensorRT plugin
// guide's first example). Spec: README.md beside this file.
#include "circ_pad.h"

#include <algorithm>
#include <cstring>

#include "../../common/dtype_dispatch.h"

namespace opforge::contrib {

namespace {
Status circPadReference(KernelContext& ctx, std::span<const Tensor> in,
                        std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), x.desc.dims);
  const size_t es = dtypeSize(x.desc.dtype);
  const int r = g.rank;
  const int64_t n = y.numel();
  if (n == 0) return Status::ok();
  // Row by row: the outer coordinates pick a source row, and the last dimension is copied in
  // runs (each run a contiguous stretch of the source row), so the cost is that of the bytes
  // written. An element-by-element loop took minutes on the billions of elements that a large pad
  // asks for (two byte-mutated models "hung", issue 21).
  const auto in_strides = ops::stridesOf(g.in_dims);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(y.data);
  const int64_t in_last = g.in_dims[r - 1], out_last = g.out_dims[r - 1];
  const int64_t rows = n / out_last;
  std::vector<int64_t> idx(r, 0);  // the output coordinates of the row, the last one 0
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = 0;
    for (int a = 0; a + 1 < r; ++a)
      off += circSource(idx[a], g.before[a], g.in_dims[a]) * in_strides[a];
    const uint8_t* srow = src + off * es;
    uint8_t* drow = dst + row * out_last * es;
    for (int64_t o = 0; o < out_last;) {
      const int64_t s0 = circSource(o, g.before[r - 1], in_last);
      const int64_t run = std::min(in_last - s0, out_last - o);
      std::memcpy(drow + o * es, srow + s0 * es, static_cast<size_t>(run) * es);
      o += run;
    }
    for (int a = r - 2; a >= 0; --a) {
      if (++idx[a] < g.out_dims[a]) break;
      idx[a] = 0;
    }
  }
  return Status::ok();
}
}  // namespace

OPFORGE_OP(circ_pad, "example::circ_pad_plugin")
    .doc("Circular (wrap-around) padding of the last m/2 dimensions of an N-D tensor.")
    .input("x", "N-D tensor")
    .output("y", "padded tensor, same type")
    .attr<std::vector<int32_t>>(
        "pads",
        "m values, m even, m/2 <= N: pads[2i], pads[2i+1] are added before and after "
        "dimension N-1-i; each >= 0")
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
      SymDesc y = c.input(0).like();
      const int n = y.rank();
      if (static_cast<int>(pads.size() / 2) > n)
        return c.error("attribute 'pads' has " + std::to_string(pads.size()) +
                       " values, which pads " + std::to_string(pads.size() / 2) +
                       " dimensions, but the input has rank " + std::to_string(n) +
                       " (m/2 <= N is required)");
      for (size_t i = 0; i < pads.size() / 2; ++i) {
        const int d = n - 1 - static_cast<int>(i);
        // Summed in 64 bits: two pads of up to 2^31 - 1 overflow int32.
        const int64_t total = int64_t{pads[2 * i]} + pads[2 * i + 1];
        if (total > 0)
          c.require(1, DimAssertion::Op::kLe, y.dim(d),
                    "a padded dimension must not be empty (dimension " + std::to_string(d) + ")");
        y.dim(d) = y.dim(d) + total;
      }
      return y;
    })
    .combos("FP32|FP16|BF16, FP32|FP16|BF16", "LINEAR")
    .cpu(circPadReference)
    .backward("example::circ_pad_plugin_grad");

}  // namespace opforge::contrib
