// opforge::FusedMatMul — a matrix product with its bias, residual and activation in one layer:
//   Y = act(alpha * A op(B) + bias + residual)   op(B) = B, or B^T over its last two axes when
//                                                transB = 1
// with numpy MatMul's batch broadcasting, bias [N] (broadcast over the rows), residual of Y's shape
// and `activation` (none, relu, gelu, gelu_tanh, sigmoid, tanh, silu). Made by the gemm_fusion
// graph pass from MatMul -> Add(bias) [-> activation] and Gemm(transB, C = [N]) [-> activation]
// chains, the node named "<matmul>+<add>+<act>"; gemm_residual adds the residual (a following Add
// of a same-shaped value). CPU reference: MatMul's product (OpenBLAS sgemm for FP32), then Add's
// reference for the bias and the residual, then the activation in the compute type.
#include "../../onnx/add/add.h"
#include "../../onnx/common/activation.h"
#include "../../onnx/common/linalg.h"

namespace opforge::ops {

OPFORGE_OP(FusedMatMul, "opforge::FusedMatMul")
    .kind("gemm")
    .doc("Matrix product with bias and activation fused (built by the gemm_fusion pass).")
    .input("A")
    .input("B")
    .optionalInput("bias", "[N]")
    .optionalInput("residual", "Y's shape, added before the activation")
    .output("Y")
    .attr<int64_t>("transB", int64_t{0})
    .attr<double>("alpha", 1.0)
    .attr<std::string>("activation", std::string("none"),
                       "none | relu | gelu | gelu_tanh | sigmoid | tanh | silu")
    .check([](const AttrMap& a) -> Status {
      return parseAct(a.get<std::string>("activation")).status();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      if (a.dtype != b.dtype)
        return c.error("inputs 'A' and 'B' must have one type, got " + dtypeName(a.dtype) +
                       " and " + dtypeName(b.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, kFloats));
      if (a.rank() < 2 || b.rank() < 2) return c.error("A and B must have rank >= 2");
      const bool tb = c.attr<int64_t>("transB") != 0;
      const DimExpr k = a.dim(-1), kb = tb ? b.dim(-1) : b.dim(-2), n = tb ? b.dim(-2) : b.dim(-1);
      OPFORGE_RETURN_IF_ERROR(requireEq(c, k, kb, "the inner dimensions of A and B must match"));
      std::vector<DimExpr> abatch(a.dims.begin(), a.dims.end() - 2),
          bbatch(b.dims.begin(), b.dims.end() - 2);
      OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, abatch, bbatch));
      dims.push_back(a.dim(-2));
      dims.push_back(n);
      if (c.hasInput(2)) {
        const SymDesc bias = c.input(2);
        if (bias.dtype != a.dtype || bias.rank() != 1)
          return c.error("input 'bias' must be 1-D [N] of A's type, got " + dtypeName(bias.dtype) +
                         toString(bias.dims));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, bias.dim(0), n, "input 'bias' must have N elements"));
      }
      if (c.hasInput(3)) {
        const SymDesc r = c.input(3);
        if (r.dtype != a.dtype || r.rank() != static_cast<int>(dims.size()))
          return c.error("input 'residual' must be Y's type and rank, got " + dtypeName(r.dtype) +
                         toString(r.dims));
        for (size_t d = 0; d < dims.size(); ++d)
          OPFORGE_RETURN_IF_ERROR(requireEq(c, r.dim(static_cast<int>(d)), dims[d],
                                            "input 'residual' must have Y's shape"));
      }
      return SymDesc::make(a.dtype, std::move(dims));
    })
    .combos("FP32|FP16|BF16|FP64")
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &a = in[0], &b = in[1], &y = out[0];
      OPFORGE_ASSIGN_OR_RETURN(Act act, parseAct(k.attr<std::string>("activation")));
      const bool tb = k.attr<int64_t>("transB") != 0;
      const double alpha = k.attr<double>("alpha");
      const auto& ad = a.desc.dims;
      const auto& bd = b.desc.dims;
      const int64_t m = ad[ad.size() - 2], kk = ad.back(), n = y.desc.dims.back();
      const std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2),
          ybatch(y.desc.dims.begin(), y.desc.dims.end() - 2);
      if (y.numel() == 0) return Status::ok();
      return visitTypes<kFloats>(a.desc.dtype, "FusedMatMul", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* pa = ptrOf<N>(a);
        const auto* pb = ptrOf<N>(b);
        auto* py = mutPtr<N>(y);
        const auto as = broadcastStrides(abatch, ybatch), bs = broadcastStrides(bbatch, ybatch);
        forEachBroadcast(ybatch, {as, bs}, [&](int64_t i, const std::vector<int64_t>& off) {
          matmulTyped<N>(false, tb, m, n, kk, alpha, pa + off[0] * m * kk, kk, pb + off[1] * kk * n,
                         tb ? kk : n, 0.0, py + i * m * n, n);
        });
        if (hasIn(in, 2)) OPFORGE_RETURN_IF_ERROR(addReference(y, in[2], y));  // the bias Add
        if (hasIn(in, 3)) OPFORGE_RETURN_IF_ERROR(addReference(y, in[3], y));  // the residual
        if (act == Act::kNone) return Status::ok();
        for (int64_t i = 0; i < y.numel(); ++i) py[i] = N::store(applyAct(N::load(py[i]), act));
        return Status::ok();
      });
    });

}  // namespace opforge::ops
