// concat.h — ai.onnx::Concat's geometry as its kernels (CPU and CUDA) check it.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "../common/kernel_axis.h"
#include "../common/util.h"

namespace opforge::ops {

struct ConcatRows {
  int axis = 0;
  int64_t outer = 1;            // rows: the product of the axes before `axis`
  std::vector<int64_t> widths;  // elements per row of each input (Y's row: their sum)
};

// The axis and the row widths; an error when the axis is outside the rank or the inputs do not
// tile Y (a loaded plan whose shape rule was not re-run: src/runtime/engine.cc), instead of
// copying past a buffer.
inline Result<ConcatRows> concatRows(int64_t axis, std::span<const Tensor> in, const Tensor& y) {
  ConcatRows c;
  const int r = y.desc.rank();
  OPFORGE_ASSIGN_OR_RETURN(c.axis, kernelAxis(axis, r));
  c.outer = prodOf(y.desc.dims, 0, c.axis);
  int64_t sum = 0;
  for (const Tensor& x : in) {
    if (x.desc.rank() != r || prodOf(x.desc.dims, 0, c.axis) != c.outer)
      return Status::invalid("Concat input " + dimsToString(x.desc.dims) +
                             " does not match the output " + dimsToString(y.desc.dims) +
                             " outside axis " + std::to_string(c.axis));
    c.widths.push_back(prodOf(x.desc.dims, c.axis, r));
    sum += c.widths.back();
  }
  if (sum != prodOf(y.desc.dims, c.axis, r))
    return Status::invalid("Concat inputs of " + std::to_string(sum) +
                           " elements per row do not fill the output " + dimsToString(y.desc.dims));
  return c;
}

}  // namespace opforge::ops
