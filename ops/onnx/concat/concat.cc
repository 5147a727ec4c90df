// ONNX Concat: joins tensors of one type and rank along `axis` (the other dimensions must match).
// Shape values pass through (Shape -> Concat -> Reshape chains).
#include <cstring>

#include "../common/bytes.h"
#include "../common/combos.h"
#include "../common/util.h"
#include "concat.h"

namespace opforge::ops {
OPFORGE_OP(Concat, "ai.onnx::Concat")
    .kind("movement")
    .doc("Concatenation along an axis.")
    .combos(comboTypes(kAll))
    .variadicValueInput("inputs")
    .output("concat_result")
    .attr<int64_t>("axis")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      if (x.rank() == 0) return c.error("inputs must have rank >= 1 (input 0 is a scalar)");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      SymDesc y = x.like();
      std::vector<DimExpr> values;
      bool have_values = x.rank() == 1;
      for (int i = 0; i < c.numInputs(); ++i) {
        SymDesc in = c.input(i);
        if (in.dtype != x.dtype)
          return c.error("input " + std::to_string(i) + " has type " + dtypeName(in.dtype) +
                         "; input 0 has " + dtypeName(x.dtype));
        if (in.rank() != x.rank())
          return c.error("input " + std::to_string(i) + " " + toString(in.dims) + " has rank " +
                         std::to_string(in.rank()) + "; input 0 " + toString(x.dims) +
                         " has rank " + std::to_string(x.rank()));
        for (int a = 0; a < x.rank(); ++a)
          if (a != axis)
            OPFORGE_RETURN_IF_ERROR(requireEq(
                c, in.dim(a), x.dim(a),
                "input " + std::to_string(i) + " " + toString(in.dims) + " must match input 0 " +
                    toString(x.dims) + " on axis " + std::to_string(a)));
        if (i > 0) y.dims[axis] = y.dims[axis] + in.dim(axis);
        auto v = c.value(i);
        if (have_values && v) values.insert(values.end(), v->begin(), v->end());
        have_values = have_values && v.has_value();
      }
      if (have_values) c.setValue(0, std::move(values));
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& y = out[0];
      OPFORGE_ASSIGN_OR_RETURN(const ConcatRows c, concatRows(k.attr<int64_t>("axis"), in, y));
      const int r = y.desc.rank();
      const size_t es = dtypeSize(y.desc.dtype);
      const int64_t outer = c.outer, row = bytesOf(prodOf(y.desc.dims, c.axis, r), es);
      int64_t at = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        const Tensor& x = in[i];
        const int64_t chunk = c.widths[i] * static_cast<int64_t>(es);
        for (int64_t o = 0; o < outer && chunk > 0; ++o)
          std::memcpy(static_cast<uint8_t*>(y.data) + o * row + at,
                      static_cast<const uint8_t*>(x.data) + o * chunk, chunk);
        at += chunk;
      }
      return Status::ok();
    });
}  // namespace opforge::ops
