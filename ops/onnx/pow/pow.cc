// ONNX Pow: C = A ^ B with numpy broadcasting. The exponent may have another numeric type; the
// result has A's type. Computed in double and converted (integers truncate toward zero).
#include "../common/binary.h"
#include "../common/combos.h"

namespace opforge::ops {
OPFORGE_OP(Pow, "ai.onnx::Pow")
    .doc("Elementwise A ^ B with numpy broadcasting.")
    .combos(comboTypes(kFloats | kSigned) + ", " + comboTypes(kNumeric, '*') + ", " +
            comboTypes(kFloats | kSigned))
    .input("X")
    .input("Y")
    .output("Z")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", a.dtype, kFloats | kSigned));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'Y'", b.dtype, kNumeric));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, a.dims, b.dims));
      return SymDesc::make(a.dtype, std::move(dims));
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return visitTypes<kFloats | kSigned>(in[0].desc.dtype, "Pow", [&](auto na) -> Status {
        return visitTypes<kNumeric>(in[1].desc.dtype, "Pow", [&](auto nb) -> Status {
          using NA = decltype(na);
          using NB = decltype(nb);
          broadcastBinary<NA, NB, NA>(in[0], in[1], out[0], [](auto x, auto y) {
            return std::pow(static_cast<double>(x), static_cast<double>(y));
          });
          return Status::ok();
        });
      });
    })
    .elementwise();
}  // namespace opforge::ops
