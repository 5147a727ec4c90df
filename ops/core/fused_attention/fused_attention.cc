// opforge::FusedAttention — scaled dot-product attention in one layer:
//   Y = softmax(scale * Q K^T) V   over the last axis of the scores
// Q [..., Sq, d], K [..., Sk, d] (or, with k_transposed = 1, K^T [..., d, Sk]), V [..., Sk, dv],
// the leading (batch, head) axes identical; Y [..., Sq, dv]. Made by the attention_fusion graph pass
// from the exported MatMul(Mul(Q, a), Mul(Transpose(K), b)) -> Softmax -> MatMul(., V) chain (scale
// = a * b); the node is named after the nodes it replaces. CPU reference: the scores, softmax and
// products in double (the Softmax reference's NaN behaviour: a NaN makes its row NaN).
#include <cmath>

#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"

namespace opforge::ops {

OPFORGE_OP(FusedAttention, "opforge::FusedAttention")
    .doc("softmax(scale * Q K^T) V in one layer (built by the attention_fusion pass).")
    .input("Q", "[..., Sq, d]")
    .input("K", "[..., Sk, d], or [..., d, Sk] with k_transposed = 1")
    .input("V", "[..., Sk, dv]")
    .output("Y", "[..., Sq, dv]")
    .attr<double>("scale", 1.0)
    .attr<int64_t>("k_transposed", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc q = c.input(0), k = c.input(1), v = c.input(2);
      if (q.dtype != k.dtype || q.dtype != v.dtype)
        return c.error("Q, K and V must have one type, got " + dtypeName(q.dtype) + ", " + dtypeName(k.dtype) + ", " +
                       dtypeName(v.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'Q'", q.dtype, kFloats));
      if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
        return c.error("Q, K and V must have one rank >= 2, got " + toString(q.dims) + ", " + toString(k.dims) + ", " +
                       toString(v.dims));
      const bool kt = c.attr<int64_t>("k_transposed") != 0;
      const int r = q.rank();
      for (int a = 0; a + 2 < r; ++a) {
        OPFORGE_RETURN_IF_ERROR(requireEq(c, k.dim(a), q.dim(a), "K's leading axes must be Q's"));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(a), q.dim(a), "V's leading axes must be Q's"));
      }
      OPFORGE_RETURN_IF_ERROR(requireEq(c, kt ? k.dim(-2) : k.dim(-1), q.dim(-1), "K's head size must be Q's"));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, kt ? k.dim(-1) : k.dim(-2), v.dim(-2), "K and V must have one length"));
      SymDesc y = q.like();
      y.dims.back() = v.dim(-1);
      return y;
    })
    .combos(comboTypes(kFloats))
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &q = in[0], &k = in[1], &v = in[2], &y = out[0];
      const bool kt = kc.attr<int64_t>("k_transposed") != 0;
      const double scale = kc.attr<double>("scale");
      const int r = q.desc.rank();
      const int64_t sq = q.desc.dims[r - 2], d = q.desc.dims[r - 1], sk = v.desc.dims[r - 2], dv = v.desc.dims[r - 1];
      const int64_t batch = prodOf(q.desc.dims, 0, r - 2);
      return visitTypes<kFloats>(q.desc.dtype, "FusedAttention", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto *pq = ptrOf<N>(q), *pk = ptrOf<N>(k), *pv = ptrOf<N>(v);
        auto* py = mutPtr<N>(y);
        std::vector<double> s(static_cast<size_t>(sk));
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < sq; ++i) {
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t j = 0; j < sk; ++j) {
              double dot = 0;
              for (int64_t t = 0; t < d; ++t)
                dot += static_cast<double>(N::load(pq[(b * sq + i) * d + t])) *
                       static_cast<double>(N::load(kt ? pk[(b * d + t) * sk + j] : pk[(b * sk + j) * d + t]));
              s[j] = scale * dot;
              if (s[j] > m || (j == 0 && std::isnan(s[j]))) m = s[j];
            }
            double sum = 0;
            for (int64_t j = 0; j < sk; ++j) sum += std::exp(s[j] - m);
            for (int64_t c = 0; c < dv; ++c) {
              double acc = 0;
              for (int64_t j = 0; j < sk; ++j)
                acc += std::exp(s[j] - m) / sum * static_cast<double>(N::load(pv[(b * sk + j) * dv + c]));
              py[(b * sq + i) * dv + c] = N::store(static_cast<C>(acc));
            }
          }
        return Status::ok();
      });
    });

}  // namespace opforge::ops
