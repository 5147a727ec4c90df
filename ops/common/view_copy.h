// view_copy.h — the kernel of the CPU view tactics (OpDef::viewTactic): in a plan's storage of its
// input a view writes nothing; given its own buffer (autotuning, the op tests) it copies the bytes.
//   .viewTactic((1 << 30) + 1, "cpu.view", copyUnlessInPlace, transposeIsView)
#pragma once

#include <cstring>
#include <span>

#include "opforge/op.h"

namespace opforge::ops {

inline Status copyUnlessInPlace(KernelContext&, std::span<const Tensor> in,
                                std::span<const Tensor> out) {
  if (in[0].data != out[0].data && out[0].bytes())
    std::memcpy(out[0].data, in[0].data, out[0].bytes());
  return Status::ok();
}

}  // namespace opforge::ops
