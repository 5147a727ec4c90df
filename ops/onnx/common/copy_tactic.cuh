// copy_tactic.cuh — the one CUDA tactic of the ops whose output is their input's bytes under
// another shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity):
//   1 cuda.copy — nothing when the output shares the input's memory (the reshape_alias pass makes
//                 it so where it can), else one device copy.
#pragma once

#include <string>
#include <utility>

#include "cuda_common.cuh"

namespace opforge::ops {

// Registers tactic 1 "cuda.copy" of the op named `op` (in error messages), applicable where
// `applies` says (by default: LINEAR tensors only).
inline void addCopyTactic(OpDef& d, const char* op, AppliesFn applies = linearOnly) {
  d.tactic(
      1, "cuda.copy",
      [op](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        if (out[0].bytes() != in[0].bytes())
          return Status::internal("output holds " + std::to_string(out[0].bytes()) +
                                  " bytes, input " + std::to_string(in[0].bytes()));
        return copyDevice(out[0].data, in[0].data, out[0].bytes(), streamOf(k), op);
      },
      std::move(applies));
}

}  // namespace opforge::ops
