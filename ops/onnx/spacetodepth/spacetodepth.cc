// ONNX SpaceToDepth: (N, C, H, W) -> (N, C b^2, H / b, W / b), the inverse of DepthToSpace.
// mode (opset 28; earlier opsets have DCR only): DCR orders the output channels (b, b, C), CRD
// (C, b, b).
#include "../common/space_depth.h"

namespace opforge::ops {
OPFORGE_OP(SpaceToDepth, "ai.onnx::SpaceToDepth")
    .doc("Moves spatial blocks into depth.")
    .input("input")
    .output("output")
    .attr<int64_t>("blocksize")
    .attr<std::string>("mode", std::string("DCR"), "DCR | CRD")
    .check([](const AttrMap& a) -> Status {
      // At most a dimension's maximum, so blocksize^2 fits in int64 (2^40 wrapped it to 0: a
      // division by zero in the shape rule).
      const int64_t b = a.get<int64_t>("blocksize");
      if (b < 1 || b > (int64_t{1} << 31) - 1)
        return Status::invalid("attribute 'blocksize' must be >= 1 and at most 2^31 - 1, got " +
                               std::to_string(b));
      const auto m = a.get<std::string>("mode");
      if (m != "DCR" && m != "CRD")
        return Status::invalid("attribute 'mode' must be DCR or CRD, got '" + m + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      if (x.rank() != 4) return c.error("input must be 4-D (N, C, H, W), got " + toString(x.dims));
      const int64_t b = c.attr<int64_t>("blocksize");
      for (int a = 2; a < 4; ++a)
        if (x.dim(a).isConst() && x.dim(a).constValue() % b != 0)
          return c.error("spatial dimension " + x.dim(a).toString() +
                         " is not divisible by blocksize " + std::to_string(b));
      return SymDesc::make(
          x.dtype, {x.dim(0), x.dim(1) * (b * b), floorDiv(x.dim(2), b), floorDiv(x.dim(3), b)});
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const auto& d = in[0].desc.dims;
      const int64_t b = k.attr<int64_t>("blocksize");
      static const int dcr[6] = {0, 3, 5, 1, 2, 4}, crd[6] = {0, 1, 3, 5, 2, 4};
      return permute6(in[0], out[0], {d[0], d[1], d[2] / b, b, d[3] / b, b},
                      k.attr<std::string>("mode") == "CRD" ? crd : dcr, "SpaceToDepth");
    });
}  // namespace opforge::ops
