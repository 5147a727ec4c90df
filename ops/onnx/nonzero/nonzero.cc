// ONNX NonZero: the indices of the non-zero elements, INT64 [rank, K] in row-major order. K is
// data dependent: a size tensor (hidden output) bounds it by the element count.
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(NonZero, "ai.onnx::NonZero")
    .doc("Indices of the non-zero elements.")
    .input("X")
    .output("Y", "INT64 [rank, K]")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kAll));
      const DimExpr upper = product(x.dims);
      SizeTensor k = c.sizeTensor(floorDiv(upper + 1, 2), upper, DataType::kInt64);
      return SymDesc::make(DataType::kInt64, {x.rank(), k.expr()});
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int r = x.desc.rank();
      const int64_t total = x.numel();
      const int64_t capacity = out[0].desc.dims[1];
      return visitTypes<kAll>(x.desc.dtype, "NonZero", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        int64_t k = 0;
        for (int64_t i = 0; i < total; ++i) k += N::load(px[i]) != C(0);
        if (k > capacity) return Status::runtime("more non-zero elements than the output can hold");
        // Rows of length K (the real count, not the capacity): row d holds coordinate d.
        auto* py = static_cast<int64_t*>(out[0].data);
        const auto st = stridesOf(x.desc.dims);
        int64_t j = 0;
        for (int64_t i = 0; i < total; ++i) {
          if (N::load(px[i]) == C(0)) continue;
          int64_t rem = i;
          for (int d = 0; d < r; ++d) {
            py[d * k + j] = rem / st[d];
            rem %= st[d];
          }
          ++j;
        }
        *static_cast<int64_t*>(out[1].data) = k;
        return Status::ok();
      });
    });
}  // namespace opforge::ops
