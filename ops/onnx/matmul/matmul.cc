// ONNX MatMul: numpy matmul — 1-D operands are promoted (and the added axis removed), leading
// batch axes broadcast. FP32 runs on sgemm (OpenBLAS when available; one call for all batches when
// B is shared), the rest on the naive loop (common/linalg.h).
#include "matmul.h"

#include "../common/combos.h"
#include "../common/linalg.h"

namespace opforge::ops {
Status matmulReference(const Tensor& a, const Tensor& b, const Tensor& y) {
  std::vector<int64_t> ad = a.desc.dims, bd = b.desc.dims;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  const size_t r = std::max(abatch.size(), bbatch.size());
  std::vector<int64_t> ybatch(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + abatch.size() >= r ? abatch[i + abatch.size() - r] : 1;
    const int64_t z = i + bbatch.size() >= r ? bbatch[i + bbatch.size() - r] : 1;
    ybatch[i] = x == 1 ? z : x;
  }
  const int64_t nb = prodOf(ybatch, 0, static_cast<int>(r)),
                bcount = prodOf(bbatch, 0, static_cast<int>(bbatch.size()));
  return visitTypes<kMatTypes>(a.desc.dtype, "MatMul", [&](auto num) -> Status {
    using N = decltype(num);
    const auto* pa = ptrOf<N>(a);
    const auto* pb = ptrOf<N>(b);
    auto* py = mutPtr<N>(y);
    if (nb == 0 || m * n == 0) return Status::ok();
    if (bcount == 1 && prodOf(abatch, 0, static_cast<int>(abatch.size())) == nb) {
      matmulTyped<N>(false, false, nb * m, n, k, 1.0, pa, k, pb, n, 0.0, py,
                     n);  // B shared: one product
      return Status::ok();
    }
    auto as = broadcastStrides(abatch, ybatch), bs = broadcastStrides(bbatch, ybatch);
    forEachBroadcast(ybatch, {as, bs}, [&](int64_t i, const std::vector<int64_t>& off) {
      matmulTyped<N>(false, false, m, n, k, 1.0, pa + off[0] * m * k, k, pb + off[1] * k * n, n,
                     0.0, py + i * m * n, n);
    });
    return Status::ok();
  });
}

Result<std::vector<DimExpr>> matmulDims(ShapeContext& c, const SymDesc& a, const SymDesc& b) {
  if (a.rank() == 0 || b.rank() == 0) return c.error("inputs must have rank >= 1 (got a scalar)");
  const bool a1 = a.rank() == 1, b1 = b.rank() == 1;
  std::vector<DimExpr> ad = a.dims, bd = b.dims;
  if (a1) ad.insert(ad.begin(), DimExpr(1));
  if (b1) bd.push_back(DimExpr(1));
  OPFORGE_RETURN_IF_ERROR(requireEq(c, ad[ad.size() - 1], bd[bd.size() - 2],
                                    "the inner dimensions of A " + toString(a.dims) + " and B " +
                                        toString(b.dims) + " must match"));
  std::vector<DimExpr> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, abatch, bbatch));
  if (!a1) dims.push_back(ad[ad.size() - 2]);
  if (!b1) dims.push_back(bd[bd.size() - 1]);
  return dims;
}

OPFORGE_OP(MatMul, "ai.onnx::MatMul")
    .kind("gemm")
    .doc("Matrix product with numpy broadcasting of batch axes.")
    .combos(comboTypes(kMatTypes))
    .input("A")
    .input("B")
    .output("Y")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      if (a.dtype != b.dtype)
        return c.error("inputs 'A' and 'B' must have one type, got " + dtypeName(a.dtype) +
                       " and " + dtypeName(b.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, kMatTypes));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, matmulDims(c, a, b));
      return SymDesc::make(a.dtype, std::move(dims));
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return matmulReference(in[0], in[1], out[0]);
    });
}  // namespace opforge::ops
