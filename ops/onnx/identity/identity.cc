// ONNX Identity: a copy of the input.
#include <cstring>

#include "../../common/dtype_dispatch.h"

namespace opforge::ops {
OPFORGE_OP(Identity, "ai.onnx::Identity")
    .doc("Returns its input.")
    .input("input")
    .output("output")
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      if (out[0].bytes()) std::memmove(out[0].data, in[0].data, out[0].bytes());
      return Status::ok();
    })
    .elementwise();
}  // namespace opforge::ops
