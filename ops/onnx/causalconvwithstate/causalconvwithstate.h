// causalconvwithstate.h — CausalConvWithState's geometry and activation, shared by its CPU
// reference and CUDA tactic.
//
// The input is read through the padded sequence P = concat(past_state or zeros, input) along the
// length axis, of length (K - 1) + L: position p < K - 1 is past_state[b, c, p] (0 without it),
// position p >= K - 1 is input[b, c, p - (K - 1)].
//   output[b, c, t]        = act(bias[c] + sum_k weight[c, 0, k] P[b, c, t + k]),  t < L
//   present_state[b, c, s] = P[b, c, L + s],                                      s < K - 1
// The convolution's result is rounded to the tensors' type before the activation, as ONNX's
// reference does; act is the identity ('none') or SiLU x sigmoid(x) ('silu', 'swish').
#pragma once

#include <cstdint>
#include <string>

#include "opforge/op.h"

namespace opforge::ops {

struct CausalConvGeom {
  int64_t batch = 0, channels = 0, length = 0, k = 1;
  bool bias = false, past = false, silu = false;
  int64_t state() const { return k - 1; }
};

// Whether the activation attribute asks for SiLU; false for 'none'. The attribute check has
// refused anything else.
inline bool causalConvSilu(const AttrMap& a) {
  const std::string act = a.get<std::string>("activation");
  return act == "silu" || act == "swish";
}

inline CausalConvGeom causalConvGeom(const AttrMap& a, const TensorDesc& input,
                                     const TensorDesc& weight, bool bias, bool past) {
  CausalConvGeom g;
  g.batch = input.dims[0];
  g.channels = input.dims[1];
  g.length = input.dims[2];
  g.k = weight.dims[2];
  g.bias = bias;
  g.past = past;
  g.silu = causalConvSilu(a);
  return g;
}

}  // namespace opforge::ops
