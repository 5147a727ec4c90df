// dynamicquantizelinear.h — DynamicQuantizeLinear's scale, zero point and quantization, shared by
// its reference and CUDA tactic. Every step in FP32, rounded as the ONNX reference rounds it.
#pragma once

#include <cmath>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

struct DqlParams {
  float scale, zero_point;
};

// From the data's minimum and maximum (each already widened to include 0).
OPFORGE_HOST_DEVICE inline DqlParams dqlParams(float lo, float hi) {
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float zp = 0.0f - lo / scale;
  zp = zp < 0.0f ? 0.0f : zp > 255.0f ? 255.0f : zp;
  return {scale, rintf(zp)};
}

OPFORGE_HOST_DEVICE inline unsigned char dqlQuantize(float x, DqlParams p) {
  float q = rintf(x / p.scale) + p.zero_point;
  q = q < 0.0f ? 0.0f : q > 255.0f ? 255.0f : q;
  return static_cast<unsigned char>(q);
}

}  // namespace opforge::ops
