// ONNX Cast: converts every element to the type `to` (an ONNX TensorProto data type number).
// Conversion rules: common/convert.h. float8, int4 and string types are not supported.
#include "../common/convert.h"

namespace opforge::ops {

OPFORGE_OP(Cast, "ai.onnx::Cast")
    .kind("cast")
    .doc("Converts the input to data type `to`.")
    .valueInput("input")
    .output("output")
    .attr<int64_t>("to", "ONNX TensorProto data type number of the output")
    .optionalAttr<int64_t>("saturate", "float8 only; ignored")
    .optionalAttr<std::string>("round_mode", "float8e8m0 only; ignored")
    .check([](const AttrMap& a) -> Status {
      int64_t to = a.get<int64_t>("to");
      if (!isKnownDataType(static_cast<int32_t>(to)))
        return Status::unsupported("attribute 'to' = " + std::to_string(to) +
                                   " is not a data type opforge supports");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll));
      SymDesc y = x.like();
      y.dtype = static_cast<DataType>(c.attr<int64_t>("to"));
      castValues(c, x, y.dtype);
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return castTensor(in[0], out[0], "Cast");
    })
    .elementwise();

}  // namespace opforge::ops
