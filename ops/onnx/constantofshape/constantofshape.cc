// ONNX ConstantOfShape: a tensor of the shape given by the input, filled with the one-element
// tensor `value` (default FP32 0). The shape must be known when the network is built.
#include <cstring>

#include "../common/util.h"

namespace opforge::ops {
namespace {
TensorValue fillValue(const AttrMap& a) {
  if (a.has("value")) return a.get<TensorValue>("value");
  TensorValue t;
  t.desc = TensorDesc{DataType::kFloat32, {1}};
  t.data.assign(4, 0);
  return t;
}
}  // namespace

OPFORGE_OP(ConstantOfShape, "ai.onnx::ConstantOfShape")
    .doc("A tensor of the given shape filled with one value.")
    .shapeInput("input", false, "INT64 1-D shape")
    .output("output")
    .optionalAttr<TensorValue>("value", "one element; default FP32 0")
    .check([](const AttrMap& a) -> Status {
      TensorValue t = fillValue(a);
      if (t.desc.numel() != 1)
        return Status::invalid("attribute 'value' must hold one element, got " + describe(t.desc));
      if (dtypeSize(t.desc.dtype) == 0)
        return Status::unsupported("attribute 'value' has an unsupported data type");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      if (c.input(0).dtype != DataType::kInt64)
        return c.error("input must be INT64, got " + dtypeName(c.input(0).dtype));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, needValue(c, 0, "input"));
      for (const auto& d : dims)
        if (d.isConst() && d.constValue() < 0)
          return c.error("the shape " + toString(dims) + " holds a negative dimension");
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      TensorValue t = fillValue(c.attrs());
      if (isIntIndex(t.desc.dtype) && dims.size() == 1 && dims[0].isConst() &&
          dims[0].constValue() <= 64)
        c.setValue(
            0, std::vector<DimExpr>(
                   static_cast<size_t>(dims[0].constValue()),
                   DimExpr(static_cast<int64_t>(loadAsDouble(t.data.data(), t.desc.dtype, 0)))));
      return SymDesc::make(t.desc.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor>, std::span<const Tensor> out) -> Status {
      TensorValue t = fillValue(k.attrs());
      const size_t es = t.data.size();
      auto* py = static_cast<uint8_t*>(out[0].data);
      for (int64_t i = 0; i < out[0].numel(); ++i) std::memcpy(py + i * es, t.data.data(), es);
      return Status::ok();
    });
}  // namespace opforge::ops
