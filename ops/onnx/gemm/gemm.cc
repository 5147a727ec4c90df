// ONNX Gemm: Y = alpha * A' B' + beta * C with A' = transA ? A^T : A (M x K), B' likewise (K x N)
// and C broadcast to (M, N). FP32 runs on sgemm (OpenBLAS when available).
#include "../common/combos.h"
#include "../common/linalg.h"

namespace opforge::ops {
OPFORGE_OP(Gemm, "ai.onnx::Gemm")
    .kind("gemm")
    .doc("General matrix multiplication Y = alpha * A' B' + beta * C.")
    .combos(comboTypes(kMatTypes))
    .input("A")
    .input("B")
    .optionalInput("C")
    .output("Y")
    .attr<double>("alpha", 1.0)
    .attr<double>("beta", 1.0)
    .attr<int64_t>("transA", int64_t{0})
    .attr<int64_t>("transB", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      if (a.dtype != b.dtype)
        return c.error("inputs 'A' and 'B' must have one type, got " + dtypeName(a.dtype) +
                       " and " + dtypeName(b.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, kMatTypes));
      if (a.rank() != 2 || b.rank() != 2)
        return c.error("A and B must be 2-D, got " + toString(a.dims) + " and " + toString(b.dims));
      const bool ta = c.attr<int64_t>("transA") != 0, tb = c.attr<int64_t>("transB") != 0;
      DimExpr m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
      DimExpr kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
      OPFORGE_RETURN_IF_ERROR(requireEq(c, k, kb, "the inner dimensions of A' and B' must match"));
      if (c.hasInput(2)) {
        SymDesc cc = c.input(2);
        if (cc.dtype != a.dtype)
          return c.error("input 'C' has type " + dtypeName(cc.dtype) + "; A has " +
                         dtypeName(a.dtype));
        if (cc.rank() > 2)
          return c.error("input 'C' must have rank <= 2, got " + toString(cc.dims));
        OPFORGE_ASSIGN_OR_RETURN(auto bc, broadcastShapes(c, {m, n}, cc.dims));
        (void)bc;
      }
      return SymDesc::make(a.dtype, {m, n});
    })
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &a = in[0], &b = in[1], &y = out[0];
      const bool ta = kc.attr<int64_t>("transA") != 0, tb = kc.attr<int64_t>("transB") != 0;
      const double alpha = kc.attr<double>("alpha");
      double beta = kc.attr<double>("beta");
      const int64_t m = y.desc.dims[0], n = y.desc.dims[1],
                    k = ta ? a.desc.dims[0] : a.desc.dims[1];
      const bool has_c = hasIn(in, 2) && beta != 0;
      return visitTypes<kMatTypes>(a.desc.dtype, "Gemm", [&](auto num) -> Status {
        using N = decltype(num);
        auto* py = mutPtr<N>(y);
        if (has_c) {  // Y = C broadcast, then Y = alpha A'B' + beta Y
          const auto* pc = ptrOf<N>(in[2]);
          forEachRun(y.desc.dims, {broadcastStrides(in[2].desc.dims, y.desc.dims)},
                     [&](int64_t o, const int64_t* off, int64_t len, const int64_t* st) {
                       for (int64_t i = 0; i < len; ++i) py[o + i] = pc[off[0] + i * st[0]];
                     });
        }
        matmulTyped<N>(ta, tb, m, n, k, alpha, ptrOf<N>(a), a.desc.dims[1], ptrOf<N>(b),
                       b.desc.dims[1], has_c ? beta : 0.0, py, n);
        return Status::ok();
      });
    });
}  // namespace opforge::ops
