// ONNX Flatten: 2-D [d0 * ... * d(axis-1), d(axis) * ... * d(n-1)], written in place when allowed.
#include "../common/combos.h"
#include "../common/reshape_util.h"

namespace opforge::ops {
OPFORGE_OP(Flatten, "ai.onnx::Flatten")
    .doc("Flattens to 2-D at axis.")
    .combos(comboTypes(kAll))
    .valueInput("input")
    .output("output")
    .attr<int64_t>("axis", int64_t{1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      const int64_t axis = c.attr<int64_t>("axis");
      const int r = x.rank();
      if (axis < -r || axis > r)
        return c.error("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(r) + " (valid: " + std::to_string(-r) + " to " +
                       std::to_string(r) + ")");
      const int a = static_cast<int>(axis < 0 ? axis + r : axis);
      SymDesc y = x.like();
      y.dims = {symProd(x.dims, 0, a), symProd(x.dims, a, r)};
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return copyThrough(in, out);
    });
}  // namespace opforge::ops
