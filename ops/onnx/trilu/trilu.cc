// ONNX Trilu: keeps the upper (upper = 1: j - i >= k) or lower (j - i <= k) triangle of the last
// two axes and zeroes the rest; k is the optional scalar input (default 0).
#include <cstring>

#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Trilu, "ai.onnx::Trilu")
    .doc("Upper or lower triangle of the last two axes.")
    .input("input")
    .optionalInput("k", "INT64 scalar diagonal offset")
    .output("output")
    .attr<int64_t>("upper", int64_t{1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      if (x.rank() < 2) return c.error("input must have rank >= 2, got " + toString(x.dims));
      if (c.hasInput(1) && c.input(1).dtype != DataType::kInt64)
        return c.error("input 'k' must be INT64");
      return x.like();
    })
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const int64_t k = hasIn(in, 1) ? readInts(in[1]).at(0) : 0;
      const bool upper = kc.attr<int64_t>("upper") != 0;
      const int r = x.desc.rank();
      const int64_t rows = x.desc.dims[r - 2], cols = x.desc.dims[r - 1],
                    mats = prodOf(x.desc.dims, 0, r - 2);
      const size_t es = dtypeSize(x.desc.dtype);
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(y.data);
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t at = ((m * rows + i) * cols + j) * static_cast<int64_t>(es);
            const bool keep = upper ? j - i >= k : j - i <= k;
            if (keep)
              std::memcpy(py + at, px + at, es);
            else
              std::memset(py + at, 0, es);
          }
      return Status::ok();
    });
}  // namespace opforge::ops
