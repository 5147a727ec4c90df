// ONNX CastLike: Cast to the data type of the second input (whose values are not read).
#include "../common/convert.h"

namespace opforge::ops {

OPFORGE_OP(CastLike, "ai.onnx::CastLike")
    .kind("cast")
    .doc("Converts the input to the data type of target_type.")
    .valueInput("input")
    .input("target_type")
    .output("output")
    .optionalAttr<int64_t>("saturate", "float8 only; ignored")
    .optionalAttr<std::string>("round_mode", "float8e8m0 only; ignored")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'target_type'", c.input(1).dtype, kAll));
      SymDesc y = x.like();
      y.dtype = c.input(1).dtype;
      castValues(c, x, y.dtype);
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return castTensor(in[0], out[0], "CastLike");
    })
    .elementwise();

}  // namespace opforge::ops
