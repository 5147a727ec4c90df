// example::non_zero_plugin — indices of the non-zero elements of a 2-D tensor, a data-dependent
// output shape (the plugin guide's size-tensor example). Spec: README.md beside this file.
#include "../../common/dtype_dispatch.h"

namespace opforge::contrib {

namespace {
Status nonZeroReference(KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t rows = x.desc.dims[0], cols = x.desc.dims[1];
  auto* idx = static_cast<int32_t*>(out[0].data);
  const int64_t capacity = out[0].desc.dims[0];
  if (x.numel() == 0) {  // before the row loop: [2^31 - 1, 0] is empty but has 2^31 - 1 rows
    *static_cast<int32_t*>(out[1].data) = 0;
    return Status::ok();
  }
  return ops::visitType(x.desc.dtype, ops::kAll, "non_zero", [&](auto num) -> Status {
    using N = decltype(num);
    const auto* p = static_cast<const typename N::S*>(x.data);
    int64_t k = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        if (N::load(p[r * cols + c]) != typename N::C(0)) {
          if (k >= capacity)
            return Status::runtime("more non-zero elements than the output can hold");
          idx[2 * k] = static_cast<int32_t>(r);
          idx[2 * k + 1] = static_cast<int32_t>(c);
          ++k;
        }
    *static_cast<int32_t*>(out[1].data) = static_cast<int32_t>(k);
    return Status::ok();
  });
}
}  // namespace

OPFORGE_OP(non_zero, "example::non_zero_plugin")
    .doc("Row-major indices of the non-zero elements of a 2-D tensor.")
    .input("x", "2-D tensor [M, N]")
    .output("indices", "INT32 [K, 2]: (row, column) of each non-zero element, row-major order")
    .output("count", "INT32 scalar: K (the size tensor)")
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      if (x.rank() != 2)
        return c.error("input must be 2-D, got rank " + std::to_string(x.rank()) + " " +
                       toString(x.dims));
      DimExpr upper = x.dim(0) * x.dim(1);
      SizeTensor k = c.sizeTensor(floorDiv(upper, 2), upper);
      return std::vector<SymDesc>{SymDesc::make(DataType::kInt32, {k.expr(), 2}), k.desc()};
    })
    .combos("FP32*FP16*INT32*BOOL, INT32, INT32")
    .cpu(nonZeroReference);

}  // namespace opforge::contrib
