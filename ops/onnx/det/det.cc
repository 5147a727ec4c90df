// ONNX Det (opset 22): the determinants of the square matrices in the last two axes of X
// ([*, M, M] -> [*]; a 2-D input gives a scalar). Float types. The reference widens each matrix to
// double and factors it with partial pivoting (det.h): the product of the pivots with the
// permutation's sign, exactly 0 for a singular matrix, 1 for a 0 x 0 one; rounded once to X's
// type.
#include "det.h"

#include <vector>

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(Det, "ai.onnx::Det")
    .doc("Determinants of (batches of) square matrices.")
    .input("X", "[*, M, M], a float type")
    .output("Y", "[*], X's type")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (x.rank() < 2)
        return c.error("input 'X' must have rank >= 2 ([*, M, M]), got " + toString(x.dims));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, x.dim(-2), x.dim(-1),
                                        "input 'X' must hold square matrices: its last two dims "
                                        "(rows, columns) of " +
                                            toString(x.dims) + " must be equal"));
      return SymDesc::make(x.dtype, std::vector<DimExpr>(x.dims.begin(), x.dims.end() - 2));
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const auto& d = in[0].desc.dims;
      const int r = in[0].desc.rank();
      const int64_t m = d[r - 1], mats = prodOf(d, 0, r - 2);
      return visitTypes<kFloats>(in[0].desc.dtype, "Det", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(in[0]);
        auto* py = mutPtr<N>(out[0]);
        std::vector<double> a(static_cast<size_t>(m * m));
        for (int64_t b = 0; b < mats; ++b) {
          for (int64_t e = 0; e < m * m; ++e)
            a[e] = static_cast<double>(N::load(px[b * m * m + e]));
          py[b] = N::store(static_cast<C>(luDeterminant(a.data(), m)));
        }
        return Status::ok();
      });
    });

}  // namespace opforge::ops
