// ONNX MatMulInteger (opset 10): Y = (A - a_zero_point) (B - b_zero_point) as INT32, numpy
// matmul semantics. A and B are INT8 or UINT8, each its own; a_zero_point is per tensor or 1-D
// per row of A ([M]), b_zero_point per tensor or 1-D per column of B ([N]), each of its operand's
// type (the N-D zero points the spec also allows, [D1, ..., M, 1] / [D1, ..., 1, N], are refused).
// The products accumulate exactly (common/qlinear.h) and wrap to 32 bits.
#include "matmulinteger.h"
#include "../matmul/matmul.h"

namespace opforge::ops {

OPFORGE_OP(MatMulInteger, "ai.onnx::MatMulInteger")
    .kind("gemm")
    .doc("Integer matrix product of 8-bit operands minus their zero points, as INT32.")
    .input("A")
    .input("B")
    .optionalInput("a_zero_point", "scalar, or [M]: per row of A")
    .optionalInput("b_zero_point", "scalar, or [N]: per column of B")
    .output("Y")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc a = c.input(0), b = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, kQ8));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'B'", b.dtype, kQ8));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, matmulDims(c, a, b));
      if (c.hasInput(2))
        OPFORGE_RETURN_IF_ERROR(checkQParam(c, 2, "a_zero_point", a.dtype, 0,
                                            a.rank() == 1 ? DimExpr(1) : a.dim(a.rank() - 2),
                                            "[M] (per row of A)"));
      if (c.hasInput(3))
        OPFORGE_RETURN_IF_ERROR(checkQParam(c, 3, "b_zero_point", b.dtype, 0,
                                            b.rank() == 1 ? DimExpr(1) : b.dim(b.rank() - 1),
                                            "[N] (per column of B)"));
      return SymDesc::make(DataType::kInt32, std::move(dims));
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_RETURN_IF_ERROR(matmulIntegerCounts(in));
      const Tensor &a = in[0], &b = in[1], &y = out[0];
      F64Tensor ad(a.desc.dims), bd(b.desc.dims), yd(y.desc.dims);
      // Row r of A [..., M, K] is elements [r K, (r + 1) K) of its matrix.
      minusZeroPoint(a, hasIn(in, 2) ? readInts(in[2]) : std::vector<int64_t>{}, a.desc.dims.back(),
                     ad);
      minusZeroPoint(b, hasIn(in, 3) ? readInts(in[3]) : std::vector<int64_t>{}, 1, bd);
      OPFORGE_RETURN_IF_ERROR(matmulReference(ad.t, bd.t, yd.t));
      for (int64_t i = 0; i < y.numel(); ++i)  // INT32 (any type of an edited plan stays in bounds)
        storeFromDouble(y.data, y.desc.dtype, i, wrapInt32(yd.v[i]));
      return Status::ok();
    });

}  // namespace opforge::ops
