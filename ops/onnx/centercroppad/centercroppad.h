// centercroppad.h — CenterCropPad's geometry, shared by its reference and CUDA tactic: per axis,
// the input index of output index o is o + shift (shift > 0 crops, < 0 pads with zeros).
#pragma once

#include <cstdint>

namespace opforge::ops {

// Crop (in >= out): the window starts at floor((in - out) / 2); pad (out > in): the input starts
// at floor((out - in) / 2) of the output (the ONNX reference: an odd difference puts the extra
// element at the end).
inline int64_t centerShift(int64_t in, int64_t out) {
  return in >= out ? (in - out) / 2 : -((out - in) / 2);
}

}  // namespace opforge::ops
