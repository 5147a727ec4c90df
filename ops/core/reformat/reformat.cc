// opforge::Reformat — the node the builder inserts where neighbours disagree on memory format
// (LINEAR <-> HWC), and the copy it inserts before an in-place op whose input is still needed.
// Same data type in and out; the formats come from the node's tensors.
#include <cstring>

#include "../../common/dtype_dispatch.h"

namespace opforge::ops {

OPFORGE_OP(Reformat, "opforge::Reformat")
    .doc("Copies a tensor into another memory format (inserted by the builder).")
    .input("x")
    .output("y")
    .attr<int64_t>("to_format", -1, "target Format; -1 keeps the input's (a plain copy)")
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const size_t es = dtypeSize(x.desc.dtype);
      const int r = x.desc.rank();
      const bool same = x.desc.format == y.desc.format || r < 3;
      if (same) {
        if (y.bytes()) std::memcpy(y.data, x.data, y.bytes());
        return Status::ok();
      }
      std::vector<int64_t> idx(r, 0);
      const int64_t n = x.numel();
      const auto* src = static_cast<const uint8_t*>(x.data);
      auto* dst = static_cast<uint8_t*>(y.data);
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + physicalOffset(y.desc, idx.data()) * es, src + physicalOffset(x.desc, idx.data()) * es, es);
        for (int a = r - 1; a >= 0; --a) {
          if (++idx[a] < x.desc.dims[a]) break;
          idx[a] = 0;
        }
      }
      return Status::ok();
    });

}  // namespace opforge::ops
