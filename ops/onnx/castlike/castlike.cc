// ONNX CastLike: Cast to the data type of the second input (whose values are not read).
#include "../common/convert.h"

namespace opforge::ops {

OPFORGE_OP(CastLike, "ai.onnx::CastLike")
    .kind("cast")
    .doc("Converts the input to the data type of target_type.")
    .valueInput("input")
    .input("target_type")
    .output("output")
    .optionalAttr<int64_t>("saturate", "float8 outputs: 1 (default) saturates, 0 gives NaN / inf")
    .optionalAttr<std::string>("round_mode", "float8e8m0 only; ignored")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll | kFp8));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'target_type'", c.input(1).dtype, kAll | kFp8));
      SymDesc y = x.like();
      y.dtype = c.input(1).dtype;
      castValues(c, x, y.dtype);
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool saturate = !k.attrs().has("saturate") || k.attr<int64_t>("saturate") != 0;
      return castTensor(in[0], out[0], "CastLike", saturate);
    })
    .elementwise();

}  // namespace opforge::ops
