// ONNX DepthToSpace: (N, C, H, W) -> (N, C / b^2, H b, W b). DCR: the depth is (b, b, C / b^2);
// CRD: (C / b^2, b, b).
#include "../common/space_depth.h"

namespace opforge::ops {
OPFORGE_OP(DepthToSpace, "ai.onnx::DepthToSpace")
    .doc("Moves depth blocks into spatial blocks.")
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
      if (x.dim(1).isConst() && x.dim(1).constValue() % (b * b) != 0)
        return c.error("channels " + x.dim(1).toString() +
                       " are not divisible by blocksize^2 = " + std::to_string(b * b));
      return SymDesc::make(x.dtype,
                           {x.dim(0), floorDiv(x.dim(1), b * b), x.dim(2) * b, x.dim(3) * b});
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const auto& d = in[0].desc.dims;
      const int64_t b = k.attr<int64_t>("blocksize"), c = d[1] / (b * b);
      if (k.attr<std::string>("mode") == "DCR") {
        static const int perm[6] = {0, 3, 4, 1, 5, 2};
        return permute6(in[0], out[0], {d[0], b, b, c, d[2], d[3]}, perm, "DepthToSpace");
      }
      static const int perm[6] = {0, 1, 4, 2, 5, 3};
      return permute6(in[0], out[0], {d[0], c, b, b, d[2], d[3]}, perm, "DepthToSpace");
    });
}  // namespace opforge::ops
