// reformat.h — what opforge::Reformat's CPU and CUDA definitions share.
#pragma once

#include <span>

#include "opforge/op.h"

namespace opforge::ops {

// The view tactics' applies(): the reformat keeps the type and the bytes (formats that store a
// tensor of these dims alike, e.g. an [N, C, 1, 1] scale between LINEAR and HWC).
inline bool reformatIsView(const AttrMap&, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
  return in.size() == 1 && out.size() == 1 && in[0].dtype == out[0].dtype &&
         in[0].dims == out[0].dims && formatsShareBytes(in[0].format, out[0].format, in[0].dims);
}

}  // namespace opforge::ops
