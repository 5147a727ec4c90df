// activation.h — the activations the fused ops (opforge::FusedConv, opforge::FusedMatMul) apply
// after their product: names, and the host reference in the compute type.
#pragma once

#include <cmath>
#include <string>

#include "opforge/status.h"

namespace opforge::ops {

enum class Act : int32_t { kNone = 0, kRelu, kGelu, kGeluTanh, kSigmoid, kTanh };

inline Result<Act> parseAct(const std::string& s) {
  if (s == "none") return Act::kNone;
  if (s == "relu") return Act::kRelu;
  if (s == "gelu") return Act::kGelu;
  if (s == "gelu_tanh") return Act::kGeluTanh;
  if (s == "sigmoid") return Act::kSigmoid;
  if (s == "tanh") return Act::kTanh;
  return Status::invalid(
      "attribute 'activation' must be none, relu, gelu, gelu_tanh, sigmoid or tanh, got '" + s +
      "'");
}

// The activation on the host, as the ONNX ops' references compute it (Relu keeps NaN).
template <typename T>
T applyAct(T v, Act a) {
  switch (a) {
    case Act::kRelu:
      return v < T(0) ? T(0) : v;
    case Act::kGelu:
      return T(0.5) * v * (T(1) + std::erf(v * static_cast<T>(0.7071067811865476)));
    case Act::kGeluTanh:
      return T(0.5) * v *
             (T(1) + std::tanh(static_cast<T>(0.7978845608028654) * (v + T(0.044715) * v * v * v)));
    case Act::kSigmoid:
      if (v >= T(0))
        return T(1) / (T(1) + std::exp(-v));
      else {
        const T e = std::exp(v);
        return e / (T(1) + e);
      }
    case Act::kTanh:
      return std::tanh(v);
    default:
      return v;
  }
}

}  // namespace opforge::ops
