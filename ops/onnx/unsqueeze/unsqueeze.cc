// ONNX Unsqueeze: inserts axes of size 1 at the given positions of the output.
#include <algorithm>

#include "../common/combos.h"
#include "../common/squeeze_util.h"

namespace opforge::ops {
OPFORGE_OP(Unsqueeze, "ai.onnx::Unsqueeze")
    .doc("Inserts axes of size 1.")
    .combos(comboTypes(kAll) + ", " + kIndexTypes + ", " + comboTypes(kAll))
    .with(squeezeDecl)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_ASSIGN_OR_RETURN(auto given, givenAxes(c));
      if (!given) return c.error("needs axes (the 'axes' input, or the attribute before opset 13)");
      const int r = x.rank() + static_cast<int>(given->size());
      OPFORGE_ASSIGN_OR_RETURN(auto axes, normAxes(c, *given, r));
      SymDesc y = x.like();
      y.dims.clear();
      int next = 0;
      for (int a = 0; a < r; ++a) {
        if (std::find(axes.begin(), axes.end(), a) != axes.end())
          y.dims.push_back(1);
        else
          y.dims.push_back(x.dim(next++));
      }
      passValues(c, y);
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return copyThrough(in, out);
    });
}  // namespace opforge::ops
