// upsample.h — what Upsample's definition (upsample.cc) and its CUDA tactics (upsample.cu) share:
// the Resize attributes Upsample is run with.
#pragma once

#include "opforge/op.h"

namespace opforge::ops {

// The attributes of an opset-10 Resize with Upsample's mode: asymmetric coordinates, floor for
// nearest, (X, scales) inputs — Upsample's definition (ONNX Runtime runs both with one kernel).
AttrMap upsampleResizeAttrs(const AttrMap& upsample);

// The scales of an Upsample node given as an attribute (opset 7); empty when they come from the
// `scales` input (opset 9).
std::vector<float> upsampleAttrScales(const AttrMap& upsample);

}  // namespace opforge::ops
