// ONNX Compress (opset 9/11): the slices of `input` along `axis` (or the elements of the flattened
// input when `axis` is absent) whose entry of the 1-D BOOL `condition` is true, in order. A
// condition shorter than the axis selects from its first entries only; a longer one is an error.
// Output: input's shape with the axis length replaced by the number of true entries K (1-D [K]
// without `axis`). When the condition is a constant at build time K is a plain dimension;
// otherwise K is data dependent: a size tensor bounded by min(len(condition), axis length).
// Pure data movement: every dtype.
#include <algorithm>
#include <cstring>

#include "../common/util.h"

namespace opforge::ops {
namespace {

// The input seen as [outer, len, inner] around the compressed axis (flattened: [1, numel, 1]).
struct Geom {
  int64_t outer = 1, len = 1, inner = 1;
};
Geom geomOf(const AttrMap& a, const std::vector<int64_t>& d) {
  Geom g;
  const int r = static_cast<int>(d.size());
  if (!a.has("axis")) {
    g.len = prodOf(d, 0, r);
    return g;
  }
  const int ax = wrapAxis(a.get<int64_t>("axis"), r);
  g.outer = prodOf(d, 0, ax);
  g.len = d[ax];
  g.inner = prodOf(d, ax + 1, r);
  return g;
}

}  // namespace

OPFORGE_OP(Compress, "ai.onnx::Compress")
    .doc("Selects slices along an axis (or elements of the flattened input) by a BOOL condition.")
    .input("input")
    .valueInput("condition", false, "BOOL [n], n <= the axis length (or the element count)")
    .output("output", "the selected slices; K = the number of true entries (data dependent)")
    .optionalAttr<int64_t>("axis", "the axis to select along, in [-rank, rank); absent: flatten")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), cond = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll));
      if (cond.dtype != DataType::kBool)
        return c.error("input 'condition' must be BOOL, got " + dtypeName(cond.dtype));
      if (cond.rank() != 1)
        return c.error("input 'condition' must be 1-D, got " + toString(cond.dims));
      int axis = -1;
      if (c.attrs().has("axis")) {
        if (x.rank() == 0) return c.error("'axis' is given but input 'input' is a scalar");
        OPFORGE_ASSIGN_OR_RETURN(axis, normAxis(c, c.attr<int64_t>("axis"), x.rank(), "axis"));
      }
      const DimExpr len = axis >= 0 ? x.dim(axis) : product(x.dims);
      const DimExpr n = cond.dim(0);
      if (n.isConst() && len.isConst() && n.constValue() > len.constValue())
        return c.error("input 'condition' has " + n.toString() + " entries, more than the " +
                       len.toString() +
                       (axis >= 0 ? " of axis " + std::to_string(axis)
                                  : std::string(" elements of the input")));
      c.require(n, DimAssertion::Op::kLe, len,
                "input 'condition' must not have more entries than the compressed length");
      DimExpr k;
      if (const TensorValue* t = c.constant(1)) {
        int64_t count = 0;
        for (uint8_t b : t->data) count += b != 0;
        k = count;
      } else {
        const DimExpr upper = min(n, len);
        k = c.sizeTensor(upper, upper, DataType::kInt64).expr();
      }
      if (axis < 0) return SymDesc::make(x.dtype, {k});
      SymDesc y = x.like();
      y.dims[axis] = k;
      return y;
    })
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &cond = in[1];
      const Geom g = geomOf(kc.attrs(), x.desc.dims);
      const int64_t n = std::min(cond.numel(), g.len);
      const auto* pc = static_cast<const uint8_t*>(cond.data);
      int64_t k = 0;
      for (int64_t j = 0; j < n; ++j) k += pc[j] != 0;
      const auto& od = out[0].desc.dims;
      const int64_t capacity =
          kc.attrs().has("axis") ? od[wrapAxis(kc.attr<int64_t>("axis"), x.desc.rank())] : od[0];
      if (k > capacity)
        return Status::runtime("input 'condition' selects " + std::to_string(k) +
                               " slices; the output holds " + std::to_string(capacity));
      const size_t es = dtypeSize(x.desc.dtype), row = static_cast<size_t>(g.inner) * es;
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(out[0].data);
      for (int64_t o = 0; o < g.outer; ++o) {
        int64_t q = 0;
        for (int64_t j = 0; j < n; ++j)
          if (pc[j] != 0) {
            std::memcpy(py + static_cast<size_t>(o * k + q) * row,
                        px + static_cast<size_t>(o * g.len + j) * row, row);
            ++q;
          }
      }
      if (out.size() > 1) *static_cast<int64_t*>(out[1].data) = k;
      return Status::ok();
    });
}  // namespace opforge::ops
