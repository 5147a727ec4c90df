// ONNX Size: the number of elements of the input, an INT64 scalar (known symbolically at build).
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Size, "ai.onnx::Size")
    .doc("The input's element count.")
    .input("data")
    .output("size")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      c.setValue(0, {product(c.input(0).dims)});
      return SymDesc::make(DataType::kInt64, {});
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      *static_cast<int64_t*>(out[0].data) = in[0].numel();
      return Status::ok();
    });
}  // namespace opforge::ops
