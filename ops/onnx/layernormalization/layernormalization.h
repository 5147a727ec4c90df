// layernormalization.h — ONNX LayerNormalization's CPU reference, for the references of fused ops
// that end in one (opforge::FusedAddLayerNorm).
#pragma once

#include <span>

#include "opforge/op.h"

namespace opforge::ops {

// in = {X, Scale, B (optional: absent or undefined)}, out = {Y, Mean?, InvStdDev?}: normalizes X
// over the axes [axis, rank) (axis may be negative) with statistics in double, as
// LayerNormalization's reference (layernormalization.cc). Mean and InvStdDev are written when
// given and not empty.
Status layerNormReference(int64_t axis, double epsilon, std::span<const Tensor> in,
                          std::span<const Tensor> out);

}  // namespace opforge::ops
