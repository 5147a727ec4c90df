// ONNX Reshape: the same elements with a new shape. In `shape`, 0 copies the input's dimension
// (unless allowzero = 1, where 0 is a real zero) and one -1 is inferred. The shape is known when
// the network is built (a constant, or computed from input shapes) or read at run time
// (opforge::ReadValues); the data is written in place when the builder allows it.
#include <algorithm>

#include "../common/combos.h"
#include "../common/reshape_util.h"
#include "../common/runtime_values.h"

namespace opforge::ops {
OPFORGE_OP(Reshape, "ai.onnx::Reshape")
    .kind("movement")
    .doc("Same data, new shape.")
    .combos(comboTypes(kAll) + ", INT64, " + comboTypes(kAll))
    .valueInput("data")
    .shapeInput("shape", false, "INT64 1-D")
    .output("reshaped")
    .attr<int64_t>("allowzero", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      if (c.input(1).dtype != DataType::kInt64)
        return c.error("input 'shape' must be INT64, got " + dtypeName(c.input(1).dtype));
      if (c.input(1).rank() != 1)
        return c.error("input 'shape' must be 1-D, got " + toString(c.input(1).dims));
      OPFORGE_ASSIGN_OR_RETURN(auto shape, needValue(c, 1, "shape"));
      const bool allowzero = c.attr<int64_t>("allowzero") != 0;
      if (std::any_of(shape.begin(), shape.end(),
                      [](const DimExpr& v) { return readAtRunTime(v); })) {
        // Run-time values (opforge::ReadValues): any may be 0 (copy) or -1 (infer) when the
        // layer runs. Each dim is v, the input's dim where v == 0, 1 where v == -1, then the
        // -1 becomes the element count over the product of the others; the count is checked.
        const DimExpr total = product(x.dims);
        std::vector<DimExpr> base, infer_at;
        for (size_t i = 0; i < shape.size(); ++i) {
          const DimExpr& v = shape[i];
          const DimExpr z = allowzero ? DimExpr(int64_t{0}) : isZero(v);
          const DimExpr n = isZero(v + 1);
          const DimExpr copied =
              static_cast<int>(i) < x.rank() ? x.dim(static_cast<int>(i)) : DimExpr(int64_t{0});
          base.push_back(v * (DimExpr(int64_t{1}) - z - n) + copied * z + n);
          infer_at.push_back(n);
        }
        const DimExpr inferred = floorDiv(total, max(product(base), DimExpr(int64_t{1})));
        std::vector<DimExpr> dims;
        for (size_t i = 0; i < base.size(); ++i)
          dims.push_back(base[i] + infer_at[i] * (inferred - 1));
        c.require(product(dims), DimAssertion::Op::kEq, total,
                  "Reshape " + toString(x.dims) + " to the run-time shape " + toString(shape) +
                      " must keep the element count (one -1 at most, no value below -1)");
        SymDesc y = x.like();
        y.dims = std::move(dims);
        return y;
      }
      std::vector<DimExpr> dims;
      int infer = -1;
      for (size_t i = 0; i < shape.size(); ++i) {
        const DimExpr& v = shape[i];
        if (v.isConst() && v.constValue() == 0 && !allowzero) {
          if (static_cast<int>(i) >= x.rank())
            return c.error("shape value 0 at position " + std::to_string(i) +
                           " copies an input dimension, but the input " + toString(x.dims) +
                           " has rank " + std::to_string(x.rank()));
          dims.push_back(x.dim(static_cast<int>(i)));
        } else if (v.isConst() && v.constValue() == -1) {
          if (infer >= 0) return c.error("shape " + toString(shape) + " has more than one -1");
          infer = static_cast<int>(i);
          dims.push_back(1);
        } else if (v.isConst() && v.constValue() < -1) {
          return c.error("shape " + toString(shape) + " holds the negative dimension " +
                         std::to_string(v.constValue()));
        } else {
          dims.push_back(v);
        }
      }
      if (infer >= 0) {
        if (allowzero)
          for (const auto& d : dims)
            if (isConstEq(d, 0))
              return c.error("shape " + toString(shape) + " has both 0 (allowzero) and -1");
        std::vector<DimExpr> known = dims;
        known.erase(known.begin() + infer);
        if (auto q = divideExact(x.dims, known)) {
          dims[infer] = *q;
        } else {
          const DimExpr total = product(x.dims), part = product(known);
          if (total.isConst() && part.isConst())
            return c.error("cannot reshape " + toString(x.dims) + " (" + total.toString() +
                           " elements) to " + toString(shape) + ": " + total.toString() +
                           " is not a multiple of " + part.toString());
          dims[infer] = floorDiv(total, part);
          c.require(product(dims), DimAssertion::Op::kEq, total,
                    "Reshape " + toString(x.dims) + " to " + toString(shape) +
                        " must keep the element count");
        }
      } else {
        auto q = divideExact(x.dims, dims);
        if (!q || !isConstEq(*q, 1)) {
          const DimExpr a = product(x.dims), b = product(dims);
          if (a.isConst() && b.isConst() && a.constValue() != b.constValue())
            return c.error("cannot reshape " + toString(x.dims) + " (" + a.toString() +
                           " elements) to " + toString(dims) + " (" + b.toString() + " elements)");
          if (!a.sameAs(b))
            c.require(b, DimAssertion::Op::kEq, a,
                      "Reshape " + toString(x.dims) + " to " + toString(dims) +
                          " must keep the element count");
        }
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      SymDesc y = x.like();
      y.dims = std::move(dims);
      passValues(c, y);
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return copyThrough(in, out);
    });
}  // namespace opforge::ops
