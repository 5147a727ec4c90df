// ONNX AffineGrid (opset 20): the sampling grid of GridSample for a batch of affine matrices.
// theta [N, 2, 3] with size (N, C, H, W) gives grid [N, H, W, 2]; theta [N, 3, 4] with size
// (N, C, D, H, W) gives [N, D, H, W, 3]. grid[n, (d,) h, w] = theta[n] · (x_w, y_h, (z_d,) 1), the
// base coordinates normalised to [-1, 1] (affinegrid.h; align_corners picks corners or centres).
// `size` is INT64, known when the network is built (its values may be symbolic). Float types;
// sums in double.
#include "affinegrid.h"

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(AffineGrid, "ai.onnx::AffineGrid")
    .doc("Generates a GridSample grid from affine matrices.")
    .input("theta", "[N, 2, 3] (2-D) or [N, 3, 4] (3-D)")
    .valueInput("size", false, "INT64 (N, C, H, W) or (N, C, D, H, W)")
    .output("grid", "[N, H, W, 2] or [N, D, H, W, 3]")
    .attr<int64_t>("align_corners", int64_t{0}, "0 or 1")
    .check([](const AttrMap& a) -> Status {
      const int64_t v = a.get<int64_t>("align_corners");
      if (v != 0 && v != 1)
        return Status::invalid("align_corners must be 0 or 1, got " + std::to_string(v));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc theta = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'theta'", theta.dtype, kFloats));
      if (c.input(1).dtype != DataType::kInt64)
        return c.error("input 'size' must be INT64, got " + dtypeName(c.input(1).dtype));
      OPFORGE_ASSIGN_OR_RETURN(auto size, needValue(c, 1, "size"));
      if (size.size() != 4 && size.size() != 5)
        return c.error("input 'size' must hold 4 values (N, C, H, W) or 5 (N, C, D, H, W), got " +
                       std::to_string(size.size()));
      const int64_t nd = static_cast<int64_t>(size.size()) - 2;  // spatial axes
      if (theta.rank() != 3)
        return c.error("input 'theta' must have rank 3, got " + toString(theta.dims));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, theta.dim(1), DimExpr(nd),
                                        "input 'theta' must be [N, " + std::to_string(nd) + ", " +
                                            std::to_string(nd + 1) + "] for a size of " +
                                            std::to_string(size.size()) + " values (dim 1)"));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, theta.dim(2), DimExpr(nd + 1),
                                        "input 'theta' must be [N, " + std::to_string(nd) + ", " +
                                            std::to_string(nd + 1) + "] for a size of " +
                                            std::to_string(size.size()) + " values (dim 2)"));
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, size[0], theta.dim(0), "'size' N must equal theta's batch"));
      std::vector<DimExpr> dims = {theta.dim(0)};
      for (size_t i = 2; i < size.size(); ++i) {
        if (size[i].isConst() && size[i].constValue() < 0)
          return c.error("input 'size' value " + size[i].toString() + " is negative");
        dims.push_back(size[i]);
      }
      dims.push_back(nd);
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      return SymDesc::make(theta.dtype, dims);
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const auto& yd = out[0].desc.dims;
      const int nd = static_cast<int>(yd.size()) - 2;
      const bool align = k.attr<int64_t>("align_corners") != 0;
      const int64_t n = yd[0];
      // Spatial sizes in (D,) H, W order; the coordinates are (x_w, y_h, z_d).
      const int64_t d = nd == 3 ? yd[1] : 1, h = yd[nd - 1], w = yd[nd];
      return visitTypes<kFloats>(in[0].desc.dtype, "AffineGrid", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* th = ptrOf<N>(in[0]);
        auto* py = mutPtr<N>(out[0]);
        int64_t at = 0;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t z = 0; z < d; ++z)
            for (int64_t yy = 0; yy < h; ++yy)
              for (int64_t xx = 0; xx < w; ++xx) {
                double base[4] = {affineBase(xx, w, align), affineBase(yy, h, align), 0, 0};
                if (nd == 3) base[2] = affineBase(z, d, align);
                base[nd] = 1;
                for (int r = 0; r < nd; ++r) {
                  double s = 0;
                  for (int j = 0; j <= nd; ++j)
                    s += static_cast<double>(N::load(th[(b * nd + r) * (nd + 1) + j])) * base[j];
                  py[at++] = N::store(static_cast<C>(s));
                }
              }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
