// ONNX EyeLike: a 2-D tensor of the input's shape with ones on diagonal k and zeros elsewhere, of
// type `dtype` (default: the input's type).
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(EyeLike, "ai.onnx::EyeLike")
    .doc("Identity-like matrix of the input's shape.")
    .input("input")
    .output("output")
    .optionalAttr<int64_t>("dtype", "ONNX data type number of the output")
    .attr<int64_t>("k", int64_t{0})
    .check([](const AttrMap& a) -> Status {
      if (a.has("dtype") && !isKnownDataType(static_cast<int32_t>(a.get<int64_t>("dtype"))))
        return Status::unsupported(
            "attribute 'dtype' = " + std::to_string(a.get<int64_t>("dtype")) +
            " is not a data type opforge supports");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      if (x.rank() != 2) return c.error("input must be 2-D, got " + toString(x.dims));
      SymDesc y = x.like();
      if (c.attrs().has("dtype")) y.dtype = static_cast<DataType>(c.attr<int64_t>("dtype"));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "output", y.dtype, kAll));
      return y;
    })
    .cpu([](KernelContext& kc, std::span<const Tensor>, std::span<const Tensor> out) -> Status {
      const Tensor& y = out[0];
      const int64_t k = kc.attr<int64_t>("k"), rows = y.desc.dims[0], cols = y.desc.dims[1];
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          storeFromDouble(y.data, y.desc.dtype, i * cols + j, j - i == k ? 1.0 : 0.0);
      return Status::ok();
    });
}  // namespace opforge::ops
