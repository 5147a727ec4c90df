// ONNX Squeeze: removes the given axes (each of size 1), or every axis of size 1 when none are
// given (then every dimension must be static).
#include <algorithm>

#include "../common/combos.h"
#include "../common/squeeze_util.h"

namespace opforge::ops {
OPFORGE_OP(Squeeze, "ai.onnx::Squeeze")
    .doc("Removes axes of size 1.")
    .combos(comboTypes(kAll) + ", " + kIndexTypes + ", " + comboTypes(kAll))
    .with(squeezeDecl)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_ASSIGN_OR_RETURN(auto given, givenAxes(c));
      std::vector<int> axes;
      if (given) {
        OPFORGE_ASSIGN_OR_RETURN(axes, normAxes(c, *given, x.rank()));
      } else {
        for (int a = 0; a < x.rank(); ++a) {
          if (!x.dim(a).isConst())
            return c.error("Squeeze without axes needs static dimensions; dimension " +
                           std::to_string(a) + " of " + toString(x.dims) + " is dynamic");
          if (x.dim(a).constValue() == 1) axes.push_back(a);
        }
      }
      SymDesc y = x.like();
      y.dims.clear();
      for (int a = 0; a < x.rank(); ++a) {
        if (std::find(axes.begin(), axes.end(), a) == axes.end()) {
          y.dims.push_back(x.dim(a));
          continue;
        }
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, x.dim(a), 1, "squeezed axis " + std::to_string(a) + " must have size 1"));
      }
      passValues(c, y);
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return copyThrough(in, out);
    });
}  // namespace opforge::ops
