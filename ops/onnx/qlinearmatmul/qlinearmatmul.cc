// ONNX QLinearMatMul (opsets 10 and 21): y = saturate(round_half_even((a - a_zero_point)
// (b - b_zero_point) * a_scale * b_scale / y_scale) + y_zero_point), numpy matmul semantics.
// a, b and y are INT8 or UINT8, each its own (the FP8 types of opset 21 are not opforge types);
// the scales are FP32, or one of FP32 / FP16 / BF16 from opset 21, and the multiplier is rounded in
// that type as ONNX's reference rounds it, the product in FP32 as ONNX Runtime and TensorRT round
// it (common/qlinear.h). a's scale and zero point are per tensor or 1-D per row ([M]), b's per
// tensor or per column ([N]), y's per tensor.
#include "qlinearmatmul.h"
#include "../matmul/matmul.h"

namespace opforge::ops {

OPFORGE_OP(QLinearMatMul, "ai.onnx::QLinearMatMul")
    .kind("gemm")
    .doc("Quantized matrix product: 8-bit operands and output with scales and zero points.")
    .input("a")
    .input("a_scale", "scalar, or [M]: per row of a")
    .input("a_zero_point", "the shape of a_scale")
    .input("b")
    .input("b_scale", "scalar, or [N]: per column of b")
    .input("b_zero_point", "the shape of b_scale")
    .input("y_scale", "scalar")
    .input("y_zero_point", "scalar; its type is y's")
    .output("y")
    .with(qReluAttr)
    .with(onnxOpsetAttr)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc a = c.input(0), b = c.input(3);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'a'", a.dtype, kQ8));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'b'", b.dtype, kQ8));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, matmulDims(c, a, b));
      const DimExpr m = a.rank() == 1 ? DimExpr(1) : a.dim(a.rank() - 2);
      const DimExpr n = b.rank() == 1 ? DimExpr(1) : b.dim(b.rank() - 1);
      const unsigned scale_types =
          opsetOf(c.attrs()) != 0 && opsetOf(c.attrs()) < 21 ? kF32 : kF32 | kF16 | kBF16;
      const DataType st = c.input(1).dtype;
      OPFORGE_RETURN_IF_ERROR(
          checkQParam(c, 1, "a_scale", DataType::kUndefined, scale_types, m, "[M] (per row)"));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 2, "a_zero_point", a.dtype, 0, m, "[M] (per row)"));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 4, "b_scale", st, 0, n, "[N] (per column)"));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 5, "b_zero_point", b.dtype, 0, n, "[N] (per column)"));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 6, "y_scale", st, 0, std::nullopt, ""));
      const DataType yt = c.input(7).dtype;
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'y_zero_point'", yt, kQ8));
      OPFORGE_RETURN_IF_ERROR(checkQParam(c, 7, "y_zero_point", yt, 0, std::nullopt, ""));
      OPFORGE_RETURN_IF_ERROR(sameCount(c, 1, 2, "a_scale", "a_zero_point"));
      OPFORGE_RETURN_IF_ERROR(sameCount(c, 4, 5, "b_scale", "b_zero_point"));
      return SymDesc::make(yt, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_RETURN_IF_ERROR(qlinearMatMulCounts(in));
      const Tensor &a = in[0], &b = in[3], &y = out[0];
      F64Tensor ad(a.desc.dims), bd(b.desc.dims), acc(y.desc.dims);
      minusZeroPoint(a, readInts(in[2]), a.desc.dims.back(), ad);
      minusZeroPoint(b, readInts(in[5]), 1, bd);
      OPFORGE_RETURN_IF_ERROR(matmulReference(ad.t, bd.t, acc.t));
      const auto sa = readDoubles(in[1]), sb = readDoubles(in[4]);
      OPFORGE_ASSIGN_OR_RETURN(const auto mult,
                               qMultipliers(sa, sb, readDoubles(in[6])[0], in[1].desc.dtype));
      const double zy = static_cast<double>(readInts(in[7])[0]);
      const double floor = k.attr<int64_t>("_relu") != 0 ? zy : -1e300;
      const int64_t rows = a.desc.rank() == 1 ? 1 : a.desc.dims[a.desc.rank() - 2];
      const int64_t cols = b.desc.rank() == 1 ? 1 : b.desc.dims.back();
      const int64_t na = static_cast<int64_t>(sa.size()), nb = static_cast<int64_t>(sb.size());
      for (int64_t i = 0; i < y.numel(); ++i) {
        // y is [..., M, N] (without M or N where a or b is 1-D): its row and column.
        const int64_t r = na == 1 ? 0 : (i / cols) % rows, col = nb == 1 ? 0 : i % cols;
        storeFromDouble(y.data, y.desc.dtype, i,
                        requantize(acc.v[i], mult[r * nb + col], zy, y.desc.dtype, floor));
      }
      return Status::ok();
    });

}  // namespace opforge::ops
