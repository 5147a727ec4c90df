// opforge/epilogue.h — the engine's one vocabulary for what a fused op applies after its main
// computation: the activation codes and their names (the `activation` attribute of
// opforge::FusedConv and opforge::FusedMatMul, what conv_fusion and gemm_fusion write), the stage
// codes of elementwise chains (opforge::FusedGelu's `chain`, what gelu_fusion writes), the GELU
// constants, and one apply function for host and device code alike, so every kernel and every CPU
// reference of the fused ops and of ONNX Gelu computes the same formula.
//
// Usage:
//
//   #include "opforge/epilogue.h"
//   auto act = opforge::parseActivation(k.attr<std::string>("activation"));  // Result<Activation>
//   if (!act) return act.status();               // names the attribute and the accepted names
//   y[i] = opforge::applyActivation(v, *act);    // float or double; in a .cu file: on the device
//
// applyActivation is `__host__ __device__` when compiled by nvcc (OPFORGE_HOST_DEVICE) and uses
// the full-precision math library (erfc, tanh, exp; no fast-math intrinsics). Codes and names are
// part of the plan format (attributes are stored by name) and of the ops' contracts: append, never
// renumber.
#pragma once

#include <math.h>
#include <stdint.h>

#include <string>

#include "opforge/status.h"

#if defined(__CUDACC__)
#define OPFORGE_HOST_DEVICE __host__ __device__
#else
#define OPFORGE_HOST_DEVICE
#endif

namespace opforge {

enum class Activation : int32_t {
  kNone = 0,      // "none":      x
  kRelu = 1,      // "relu":      x < 0 ? 0 : x (NaN stays NaN)
  kGelu = 2,      // "gelu":      0.5 x (1 + erf(x / sqrt 2))             (ONNX Gelu "none")
  kGeluTanh = 3,  // "gelu_tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  ("tanh")
  kSigmoid = 4,   // "sigmoid":   1 / (1 + exp(-x)), evaluated without overflow
  kTanh = 5,      // "tanh":      tanh(x)
  kSilu = 6,      // "silu":      x sigmoid(x), evaluated without overflow (SiLU, swish with beta 1)
};
constexpr int32_t kNumActivations = 7;

// Stages of an elementwise chain (the `chain` attribute of opforge::FusedGelu, what the
// gelu_fusion pass writes): a fused node applies its head GELU, then these in order. The numbers
// are part of that attribute's contract (ONNX exports and plans store them).
enum EpilogueStage : int32_t {
  kEpilogueGelu = 1,      // gelu, as Activation::kGelu
  kEpilogueGeluTanh = 2,  // gelu_tanh, as Activation::kGeluTanh
  kEpilogueRelu = 3,      // relu
  kEpilogueTanh = 4,      // tanh
  kEpilogueSigmoid = 5,   // sigmoid
  kEpilogueMul = 6,       // x * c
  kEpilogueAdd = 7,       // x + c
  kEpilogueDiv = 8,       // x / c
};
constexpr int32_t kFirstEpilogueStage = kEpilogueGelu;
constexpr int32_t kLastEpilogueStage = kEpilogueDiv;
// The longest stage list a fused node takes, its head stage included.
constexpr int kMaxEpilogueStages = 16;

inline bool epilogueStageTakesScalar(int32_t code) {
  return code == kEpilogueMul || code == kEpilogueAdd || code == kEpilogueDiv;
}

// "gelu", "gelu_tanh", "relu", "tanh", "sigmoid", "mul", "add", "div"; "?" for other codes.
inline const char* epilogueStageName(int32_t code) {
  switch (code) {
    case kEpilogueGelu:
      return "gelu";
    case kEpilogueGeluTanh:
      return "gelu_tanh";
    case kEpilogueRelu:
      return "relu";
    case kEpilogueTanh:
      return "tanh";
    case kEpilogueSigmoid:
      return "sigmoid";
    case kEpilogueMul:
      return "mul";
    case kEpilogueAdd:
      return "add";
    case kEpilogueDiv:
      return "div";
    default:
      return "?";
  }
}

// GELU's constants, for the kernels and references that spell GELU out themselves.
constexpr double kGeluSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kGeluSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kGeluKappa = 0.044715;                      // the cubic term of the tanh form

// "none", "relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu"; "?" for a code outside the enum.
inline const char* activationName(Activation a) {
  switch (a) {
    case Activation::kNone:
      return "none";
    case Activation::kRelu:
      return "relu";
    case Activation::kGelu:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kSigmoid:
      return "sigmoid";
    case Activation::kTanh:
      return "tanh";
    case Activation::kSilu:
      return "silu";
  }
  return "?";
}

// The activation named `s`, or InvalidArgument naming attribute 'activation' and every name.
inline Result<Activation> parseActivation(const std::string& s) {
  for (int32_t c = 0; c < kNumActivations; ++c)
    if (s == activationName(static_cast<Activation>(c))) return static_cast<Activation>(c);
  return Status::invalid(
      "attribute 'activation' must be none, relu, gelu, gelu_tanh, sigmoid, tanh or silu, got '" +
      s + "'");
}

namespace epilogue_detail {
OPFORGE_HOST_DEVICE inline float erfcT(float v) {
  return ::erfcf(v);
}
OPFORGE_HOST_DEVICE inline double erfcT(double v) {
  return ::erfc(v);
}
OPFORGE_HOST_DEVICE inline float tanhT(float v) {
  return ::tanhf(v);
}
OPFORGE_HOST_DEVICE inline double tanhT(double v) {
  return ::tanh(v);
}
OPFORGE_HOST_DEVICE inline float expT(float v) {
  return ::expf(v);
}
OPFORGE_HOST_DEVICE inline double expT(double v) {
  return ::exp(v);
}
}  // namespace epilogue_detail

// a(v) in T (float or double): the formulas in the enum's comments, as the ONNX ops' references
// compute them.
template <typename T>
OPFORGE_HOST_DEVICE inline T applyActivation(T v, Activation a) {
  using namespace epilogue_detail;
  switch (a) {
    case Activation::kRelu:
      return v < T(0) ? T(0) : v;
    case Activation::kGelu:  // 1 + erf(z) as erfc(-z): accurate in the negative tail
      return T(0.5) * v * erfcT(-v * static_cast<T>(kGeluSqrtHalf));
    case Activation::kGeluTanh:
      return T(0.5) * v *
             (T(1) + tanhT(static_cast<T>(kGeluSqrt2OverPi) *
                           (v + static_cast<T>(kGeluKappa) * v * v * v)));
    case Activation::kSigmoid:
      if (v >= T(0)) return T(1) / (T(1) + expT(-v));
      {
        const T e = expT(v);
        return e / (T(1) + e);
      }
    case Activation::kTanh:
      return tanhT(v);
    case Activation::kSilu:
      if (v >= T(0)) return v / (T(1) + expT(-v));
      {
        const T e = expT(v);
        return v * e / (T(1) + e);
      }
    default:
      return v;
  }
}

}  // namespace opforge
