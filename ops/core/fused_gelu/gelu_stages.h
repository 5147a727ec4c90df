// gelu_stages.h — the stage list of a fused GELU node: the engine's opforge::FusedGeluChain (the
// op the gelu_fusion pass makes) and the contrib library's opforge::FusedGelu (the seed's plugin)
// with its backward opforge::FusedGeluGrad share its attributes, checks and float64 derivatives.
// The stage codes and GELU constants are the engine's epilogue vocabulary (opforge/epilogue.h).
//
// A fused GELU node computes y = s_k(...s_1(gelu(x))...) in one pass: the head GELU (attribute
// `approximate`, "none" = erf form, "tanh" = tanh form) followed by the stages in `chain`, each
// a code below, with the operand of the scalar stages in `chain_scalars`. The stage list is
// evaluated in registers (fp32 for FP32/FP16/BF16 storage, fp64 for FP64).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/epilogue.h"
#include "opforge/op.h"

namespace opforge::gelu {

// Stage codes of the `chain` attribute (the README's table; values are part of the op's contract):
// the engine's epilogue stages (opforge/epilogue.h), which the gelu_fusion pass writes.
enum GeluStageCode : int32_t {
  kStageGelu = kEpilogueGelu,          // x Phi(x)                           (ONNX Gelu "none")
  kStageGeluTanh = kEpilogueGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  ("tanh")
  kStageRelu = kEpilogueRelu,          // x < 0 ? 0 : x  (NaN stays NaN)
  kStageTanh = kEpilogueTanh,          // tanh(x)
  kStageSigmoid = kEpilogueSigmoid,    // 1 / (1 + exp(-x))
  kStageMul = kEpilogueMul,            // x * c
  kStageAdd = kEpilogueAdd,            // x + c
  kStageDiv = kEpilogueDiv,            // x / c
};
constexpr int32_t kFirstStageCode = kFirstEpilogueStage;
constexpr int32_t kLastStageCode = kLastEpilogueStage;
// Head stage included; bounds the kernels' by-value stage table.
constexpr int kMaxGeluStages = kMaxEpilogueStages;

inline bool stageTakesScalar(int32_t code) {
  return epilogueStageTakesScalar(code);
}

inline const char* stageName(int32_t code) {
  return epilogueStageName(code);
}

// The whole stage list of a node (head GELU first), as the kernels take it.
struct GeluStages {
  int32_t n = 0;
  int32_t code[kMaxGeluStages] = {};
  float scalar[kMaxGeluStages] = {};
};

// Attribute checks shared by the forward and backward ops.
inline Status checkGeluAttrs(const AttrMap& a) {
  const auto approx = a.get<std::string>("approximate");
  if (approx != "none" && approx != "tanh")
    return Status::invalid("attribute 'approximate' must be \"none\" or \"tanh\", got \"" + approx +
                           "\"");
  const auto chain = a.get<std::vector<int32_t>>("chain");
  const auto scalars = a.get<std::vector<float>>("chain_scalars");
  if (static_cast<int>(chain.size()) + 1 > kMaxGeluStages)
    return Status::invalid("attribute 'chain' has " + std::to_string(chain.size()) +
                           " stages; at most " + std::to_string(kMaxGeluStages - 1) +
                           " are supported");
  if (!scalars.empty() && scalars.size() != chain.size())
    return Status::invalid(
        "attribute 'chain_scalars' must be empty or have one value per 'chain' stage (" +
        std::to_string(chain.size()) + "), got " + std::to_string(scalars.size()));
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] < kFirstStageCode || chain[i] > kLastStageCode)
      return Status::invalid("attribute 'chain' value " + std::to_string(chain[i]) + " at index " +
                             std::to_string(i) + " is not a stage code (" +
                             std::to_string(kFirstStageCode) + ".." +
                             std::to_string(kLastStageCode) + ")");
    if (stageTakesScalar(chain[i]) && scalars.empty())
      return Status::invalid(std::string("attribute 'chain' stage ") + std::to_string(i) + " (" +
                             stageName(chain[i]) +
                             ") needs its operand in 'chain_scalars', which is empty");
    if (stageTakesScalar(chain[i]) && !std::isfinite(scalars[i]))
      return Status::invalid("attribute 'chain_scalars' value at index " + std::to_string(i) +
                             " is not finite");
    if (chain[i] == kStageDiv && scalars[i] == 0.f)
      return Status::invalid("attribute 'chain_scalars' value at index " + std::to_string(i) +
                             " divides by zero");
  }
  return Status::ok();
}

inline GeluStages geluStages(const AttrMap& a) {
  GeluStages s;
  const auto chain = a.get<std::vector<int32_t>>("chain");
  const auto scalars = a.get<std::vector<float>>("chain_scalars");
  s.code[s.n++] = a.get<std::string>("approximate") == "tanh" ? kStageGeluTanh : kStageGelu;
  for (size_t i = 0; i < chain.size() && s.n < kMaxGeluStages; ++i) {
    s.code[s.n] = chain[i];
    s.scalar[s.n] = scalars.empty() ? 0.f : scalars[i];
    ++s.n;
  }
  return s;
}

// The attribute declarations, shared by FusedGelu and FusedGeluGrad.
inline void declareGeluAttrs(OpDef& d) {
  d.attr<std::string>("approximate", std::string("none"),
                      "head GELU form: \"none\" (erf) or \"tanh\"")
      .attr<std::vector<int32_t>>(
          "chain", std::vector<int32_t>{},
          "stages applied after the head GELU, in order: 1 gelu, 2 gelu_tanh, 3 relu, 4 tanh, "
          "5 sigmoid, 6 mul c, 7 add c, 8 div c")
      .attr<std::vector<float>>(
          "chain_scalars", std::vector<float>{},
          "operand c of each chain stage (mul/add/div); empty when no stage takes one")
      .check(checkGeluAttrs);
}

// ---- float64 derivatives: FusedGeluGrad's reference (gelu_reference.h), FP64 device code ----

// The engine's GELU constants (opforge/epilogue.h).
constexpr double kSqrtHalf = opforge::kGeluSqrtHalf;        // 1/sqrt(2)
constexpr double kSqrt2OverPi = opforge::kGeluSqrt2OverPi;  // sqrt(2/pi)
constexpr double kInvSqrt2Pi = opforge::kGeluInvSqrt2Pi;    // 1/sqrt(2 pi)
constexpr double kGeluKappa = opforge::kGeluKappa;

// d stage / d v at v (host and device).
OPFORGE_HOST_DEVICE inline double stageGradRef(int32_t code, double v, double c) {
  switch (code) {
    case kStageGelu:
      return 0.5 * ::erfc(-v * kSqrtHalf) + v * kInvSqrt2Pi * ::exp(-0.5 * v * v);
    case kStageGeluTanh: {
      const double t = ::tanh(kSqrt2OverPi * (v + kGeluKappa * v * v * v));
      return 0.5 * (1.0 + t) +
             0.5 * v * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kGeluKappa * v * v);
    }
    case kStageRelu:
      return v > 0 ? 1.0 : 0.0;
    case kStageTanh: {
      const double t = ::tanh(v);
      return 1.0 - t * t;
    }
    case kStageSigmoid: {
      const double s = 1.0 / (1.0 + ::exp(-v));
      return s * (1.0 - s);
    }
    case kStageMul:
      return c;
    case kStageAdd:
      return 1.0;
    case kStageDiv:
      return 1.0 / c;
    default:
      return 1.0;
  }
}

}  // namespace opforge::gelu
