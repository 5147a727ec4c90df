// ONNX BitShift: x << y or x >> y (direction LEFT / RIGHT) on unsigned and (opset 28) signed
// integers with numpy broadcasting; shift amounts out of [0, width) as bitshift.h says.
#include "bitshift.h"

#include "../common/binary.h"
#include "../common/combos.h"

namespace opforge::ops {

OPFORGE_OP(BitShift, "ai.onnx::BitShift")
    .doc("Elementwise bit shift of integers.")
    .combos(comboTypes(kUnsigned | kSigned))
    .input("X")
    .input("Y")
    .output("Z")
    .attr<std::string>("direction", "LEFT or RIGHT")
    .check([](const AttrMap& a) -> Status {
      const auto d = a.get<std::string>("direction");
      if (d != "LEFT" && d != "RIGHT")
        return Status::invalid("attribute 'direction' must be LEFT or RIGHT, got '" + d + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      if (a.dtype != b.dtype)
        return c.error("inputs 'X' and 'Y' must have one type, got " + dtypeName(a.dtype) +
                       " and " + dtypeName(b.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", a.dtype, kUnsigned | kSigned));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, a.dims, b.dims));
      return SymDesc::make(a.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool left = k.attr<std::string>("direction") == "LEFT";
      return visitTypes<kUnsigned | kSigned>(in[0].desc.dtype, "BitShift", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        broadcastBinary<N, N, N>(in[0], in[1], out[0],
                                 [left](C x, C y) { return bitShift(x, y, left); });
        return Status::ok();
      });
    })
    .elementwise();
}  // namespace opforge::ops
