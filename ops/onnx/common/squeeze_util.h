// squeeze_util.h — the axes of Squeeze / Unsqueeze: the `axes` input (opset 13) or attribute.
#pragma once

#include "reshape_util.h"

namespace opforge::ops {

inline OpDef& squeezeDecl(OpDef& d) {
  return d.valueInput("data")
      .shapeInput("axes", true, "INT64 1-D (opset 13)")
      .output("squeezed")
      .optionalAttr<std::vector<int64_t>>("axes", "opset < 13");
}

// The axes given (input or attribute); nullopt when neither is.
inline Result<std::optional<std::vector<int64_t>>> givenAxes(const ShapeContext& c) {
  if (c.hasInput(1)) {
    if (!isIntIndex(c.input(1).dtype))
      return c.error("input 'axes' must be INT64, got " + dtypeName(c.input(1).dtype));
    OPFORGE_ASSIGN_OR_RETURN(auto v, needInts(c, 1, "axes"));
    return std::optional<std::vector<int64_t>>(v);
  }
  if (c.attrs().has("axes"))
    return std::optional<std::vector<int64_t>>(c.attr<std::vector<int64_t>>("axes"));
  return std::optional<std::vector<int64_t>>();
}

}  // namespace opforge::ops
