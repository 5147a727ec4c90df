// ONNX BitCast (opset 26): the input's bits read as data type `to` (an ONNX TensorProto data type
// number of the same bit width), the shape unchanged; little-endian, as the host and the GPU are.
// Every type opforge stores is accepted (BOOL counts as 8 bits, as ONNX defines it); the types
// opforge does not store (string, complex, the FNUZ float8 variants, E8M0, the 4- and 2-bit types)
// are an Unsupported error naming the type. The output has another type than the input, so it can
// not alias it (an aliased output keeps its input's type): the CPU reference copies the bytes, the
// CUDA tactic (bitcast.cu) is one device-to-device copy.
#include <cstring>

#include "../common/util.h"

namespace opforge::ops {
namespace {

// The ONNX name of a TensorProto data type number (opforge's name where it stores the type).
std::string onnxTypeName(int64_t t) {
  if (t > 0 && t <= INT32_MAX && isKnownDataType(static_cast<int32_t>(t)))
    return dtypeName(static_cast<DataType>(t));
  switch (t) {
    case 8:
      return "STRING";
    case 14:
      return "COMPLEX64";
    case 15:
      return "COMPLEX128";
    case 18:
      return "FLOAT8E4M3FNUZ";
    case 20:
      return "FLOAT8E5M2FNUZ";
    case 21:
      return "UINT4";
    case 22:
      return "INT4";
    case 23:
      return "FLOAT4E2M1";
    case 24:
      return "FLOAT8E8M0";
    case 25:
      return "UINT2";
    case 26:
      return "INT2";
    default:
      return "not an ONNX data type";
  }
}

std::string bitsOf(DataType t) {
  return std::to_string(dtypeSize(t) * 8) + " bits";
}

}  // namespace

OPFORGE_OP(BitCast, "ai.onnx::BitCast")
    .kind("cast")
    .doc("Reinterprets the input's bits as data type `to` of the same bit width.")
    .input("input")
    .output("output")
    .attr<int64_t>("to", "ONNX TensorProto data type number of the output")
    .check([](const AttrMap& a) -> Status {
      const int64_t to = a.get<int64_t>("to");
      if (to <= 0 || to > INT32_MAX || !isKnownDataType(static_cast<int32_t>(to)))
        return Status::unsupported("attribute 'to' = " + std::to_string(to) + " (" +
                                   onnxTypeName(to) +
                                   ") is not a data type opforge supports (BitCast)");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll | kFp8));
      const int64_t to_attr = c.attr<int64_t>("to");
      const auto to = static_cast<DataType>(to_attr);
      if (dtypeSize(to) != dtypeSize(x.dtype))
        return c.error("input 'input' has type " + dtypeName(x.dtype) + " (" + bitsOf(x.dtype) +
                       ") and attribute 'to' = " + std::to_string(to_attr) + " is " +
                       dtypeName(to) + " (" + bitsOf(to) +
                       "); BitCast needs types of the same bit width");
      SymDesc y = x.like();
      y.dtype = to;
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      if (out[0].bytes() != in[0].bytes())
        return Status::internal("BitCast: output holds " + std::to_string(out[0].bytes()) +
                                " bytes, input " + std::to_string(in[0].bytes()));
      if (out[0].bytes() && out[0].data != in[0].data)
        std::memmove(out[0].data, in[0].data, out[0].bytes());
      return Status::ok();
    })
    .elementwise();
}  // namespace opforge::ops
