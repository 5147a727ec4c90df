// ONNX OneHot: out[..., d, ...] = values[1] where d == indices[...] (negative indices count from
// depth), values[0] elsewhere; the new axis of size depth sits at `axis`. An index outside
// [-depth, depth) gives a row of values[0]. depth is a constant, or computed from input shapes.
#include <cmath>

#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(OneHot, "ai.onnx::OneHot")
    .doc("One-hot encoding.")
    .input("indices")
    .valueInput("depth", false, "scalar, any numeric type")
    .input("values", "[off_value, on_value]")
    .output("output")
    .attr<int64_t>("axis", int64_t{-1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc idx = c.input(0), v = c.input(2);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'indices'", idx.dtype, kNumeric));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'values'", v.dtype, kAll));
      if (v.rank() != 1 || !isConstEq(v.dim(0), 2))
        return c.error("input 'values' must be [off_value, on_value], got " + toString(v.dims));
      // depth: a constant of any numeric type, or integer values computed from input shapes
      // (LongT5's seq_len // block + 1), checked >= 1 wherever shapes are bound.
      DimExpr depth;
      const auto sym = c.constant(1) ? std::nullopt : c.value(1);
      if (sym && !(sym->size() == 1 && (*sym)[0].isConst())) {
        if (sym->size() != 1) return c.error("input 'depth' must be a scalar");
        depth = (*sym)[0];
        c.require(DimExpr(1), DimAssertion::Op::kLe, depth, "depth must be >= 1");
      } else {
        OPFORGE_ASSIGN_OR_RETURN(auto d, needNumbers(c, 1, "depth"));
        if (d.size() != 1) return c.error("input 'depth' must be a scalar");
        if (!(d[0] >= 1 && d[0] <= static_cast<double>(int64_t{1} << 40)))
          return c.error("depth must be in [1, 2^40], got " + std::to_string(d[0]));
        depth = static_cast<int64_t>(d[0]);
      }
      const int r = idx.rank() + 1;
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), r));
      std::vector<DimExpr> dims = idx.dims;
      dims.insert(dims.begin() + axis, depth);
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      return SymDesc::make(v.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &idx = in[0], &v = in[2], &y = out[0];
      const int r = y.desc.rank();
      const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
      const int64_t depth = y.desc.dims[axis];
      const int64_t outer = prodOf(y.desc.dims, 0, axis), inner = prodOf(y.desc.dims, axis + 1, r);
      return visitBySize(v.desc.dtype, "OneHot", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const S* pv = static_cast<const S*>(v.data);
        S* py = static_cast<S*>(y.data);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t hot = static_cast<int64_t>(
                std::trunc(loadAsDouble(idx.data, idx.desc.dtype, o * inner + i)));
            if (hot < 0) hot += depth;
            for (int64_t d = 0; d < depth; ++d)
              py[(o * depth + d) * inner + i] = pv[d == hot ? 1 : 0];
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
