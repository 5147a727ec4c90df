// ONNX Cast: converts every element to the type `to` (an ONNX TensorProto data type number).
// Conversion rules: common/convert.h. FP8 E4M3FN and E5M2 on the CPU (not the CUDA tactic); the
// FNUZ float8 variants, E8M0, 4- and 2-bit and string types are not supported.
#include "../common/convert.h"

namespace opforge::ops {

OPFORGE_OP(Cast, "ai.onnx::Cast")
    .kind("cast")
    .doc("Converts the input to data type `to`.")
    .valueInput("input")
    .output("output")
    .attr<int64_t>("to", "ONNX TensorProto data type number of the output")
    .optionalAttr<int64_t>("saturate", "float8 outputs: 1 (default) saturates, 0 gives NaN / inf")
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
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll | kFp8));
      SymDesc y = x.like();
      y.dtype = static_cast<DataType>(c.attr<int64_t>("to"));
      castValues(c, x, y.dtype);
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool saturate = !k.attrs().has("saturate") || k.attr<int64_t>("saturate") != 0;
      return castTensor(in[0], out[0], "Cast", saturate);
    })
    .elementwise();

}  // namespace opforge::ops
