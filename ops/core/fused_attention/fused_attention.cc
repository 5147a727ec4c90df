// opforge::FusedAttention — scaled dot-product attention in one layer:
//   Y = softmax(scale * Q K^T [+ bias]) V   over the last axis of the scores
// layout "bhsd" (default): Q [..., Sq, d], K [..., Sk, d] (or, with k_transposed = 1, K^T
// [..., d, Sk]), V [..., Sk, dv], the leading (batch, head) axes identical; Y [..., Sq, dv].
// layout "sb3e": Q = K = V = P [S, B, 3E], the packed in_proj output of nn.MultiheadAttention with
// `heads` heads (attention_views.h); Y [S, B, heads, E / heads] — the head split and merge the
// exporter writes as Reshape/Transpose/Gather chains are read in place. layout "bshd": Q [B, Sq,
// H, d], K [B, Sk, H, d], V [B, Sk, H, dv], Y [B, Sq, H, dv] — transformers' Transposes of the
// split heads to [B, H, S, d] and back, read in place. layout "bs3e": Q = K = V = P [B, S, 3E],
// the packed projection batch first; Y [B, S, heads, E / heads].
// The optional bias (not sb3e) broadcasts to the scores [..., Sq, Sk] ([B, H, Sq, Sk] for bshd and
// bs3e): the attention mask
// transformers' SDPA exports as Where(mask, 0, -inf) -> Add. Made by the attention_fusion pass
// from MatMul(Mul(Q, a), Mul(Transpose(K), b)) [-> Add(., bias)] -> Softmax -> MatMul(., V) (scale
// = a * b), then mha_fusion for the packed layout; nodes are named after the nodes they replace.
// With nan_to_zero, NaN probabilities become 0, as the Where(IsNaN(P), 0, P) after the softmax
// of PyTorch's SDPA export does. CPU reference: the unfused chain's own references — MatMul(Q,
// K^T), Mul by scale, the bias added, Softmax (a NaN makes its row NaN; a row of -inf too), NaN to
// 0 if asked, MatMul(., V) — one (batch, head) at a time.
#include <cmath>
#include <vector>

#include "../../onnx/common/combos.h"
#include "../../onnx/common/gemm.h"
#include "../../onnx/common/util.h"
#include "../../onnx/matmul/matmul.h"
#include "../../onnx/mul/mul.h"
#include "../../onnx/softmax/softmax.h"
#include "attention_views.h"

namespace opforge::ops {
namespace {

// The optional bias (input 3): Q's type, broadcasting to `scores` — or, with windows W > 0, [W, H |
// 1, Sq | 1, Sk | 1] over scores [B, H, Sq, Sk] with B a multiple of W.
Status checkBias(ShapeContext& c, const SymDesc& q, std::vector<DimExpr> scores) {
  const int64_t w = c.attr<int64_t>("windows");
  if (w < 0) return c.error("attribute 'windows' must be >= 0, got " + std::to_string(w));
  if (!c.hasInput(3)) return Status::ok();
  const SymDesc m = c.input(3);
  const int r = static_cast<int>(scores.size());
  if (m.dtype != q.dtype)
    return c.error("input 'bias' must have Q's type " + dtypeName(q.dtype) + ", got " +
                   dtypeName(m.dtype));
  if (w > 0) {
    if (r != 4 || m.rank() != 4 || !isConstEq(m.dims[0], w))
      return c.error(
          "with windows = " + std::to_string(w) +
          ", input 'bias' must be [windows, H, Sq, Sk] over scores [B, H, Sq, Sk], got " +
          toString(m.dims) + " over " + toString(scores));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, DimExpr::binary(DimExpr::Kind::kFloorDiv, scores[0], w),
                                      DimExpr::binary(DimExpr::Kind::kCeilDiv, scores[0], w),
                                      "with windows = " + std::to_string(w) +
                                          " the batch must be a multiple of it, got " +
                                          scores[0].toString()));
    scores[0] = w;
  }
  if (m.rank() > r)
    return c.error("input 'bias' " + toString(m.dims) + " has more axes than the scores " +
                   toString(scores));
  for (int a = 0; a < m.rank(); ++a) {
    const DimExpr &md = m.dims[a], &sd = scores[r - m.rank() + a];
    if (isConstEq(md, 1)) continue;
    const std::string what =
        "input 'bias' " + toString(m.dims) + " must broadcast to the scores " + toString(scores);
    if (md.isConst() || md.sameAs(sd)) {
      OPFORGE_RETURN_IF_ERROR(requireEq(c, md, sd, what));
      continue;
    }
    // A length known only at run time (a mask Expand-ed to run-time values: HuBERT's TorchScript
    // export) may be 1 there: 1 or the scores' length, checked at every shape (the kernels take
    // the bias's strides from its run-time dims).
    c.require(md, DimAssertion::Op::kBroadcast, sd, what);
    c.require(md, DimAssertion::Op::kLe, sd, what);
  }
  return Status::ok();
}

// layout bshd: Q [B, Sq, H, d], K [B, Sk, H, d], V [B, Sk, H, dv] -> Y [B, Sq, H, dv].
Result<SymDesc> bshdShape(ShapeContext& c) {
  const SymDesc q = c.input(0), k = c.input(1), v = c.input(2);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'Q'", q.dtype, kFloats));
  if (k.dtype != q.dtype || v.dtype != q.dtype)
    return c.error("Q, K and V must have one type, got " + dtypeName(q.dtype) + ", " +
                   dtypeName(k.dtype) + ", " + dtypeName(v.dtype));
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    return c.error("layout bshd needs Q, K and V of rank 4 ([batch, length, heads, size]), got " +
                   toString(q.dims) + ", " + toString(k.dims) + ", " + toString(v.dims));
  for (const SymDesc* o : {&k, &v})
    for (int a : {0, 2})
      OPFORGE_RETURN_IF_ERROR(requireEq(c, o->dim(a), q.dim(a),
                                        "layout bshd needs Q, K and V to share batch and heads"));
  OPFORGE_RETURN_IF_ERROR(requireEq(c, k.dim(3), q.dim(3), "K's head size must be Q's"));
  OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(1), k.dim(1), "K and V must have one length"));
  OPFORGE_RETURN_IF_ERROR(checkBias(c, q, {q.dim(0), q.dim(2), q.dim(1), k.dim(1)}));
  return SymDesc::make(q.dtype, {q.dim(0), q.dim(1), q.dim(2), v.dim(3)});
}

// layouts sb3e ([S, B, 3E]) and bs3e ([B, S, 3E]): Q = K = V = P, Y [S, B, H, d] / [B, S, H, d].
Result<SymDesc> packedShape(ShapeContext& c, bool sfirst) {
  const SymDesc q = c.input(0), k = c.input(1), v = c.input(2);
  const std::string name = sfirst ? "sb3e" : "bs3e";
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'Q'", q.dtype, kFloats));
  const int64_t h = c.attr<int64_t>("heads");
  if (q.rank() != 3 || !q.dim(2).isConst() || q.dim(2).constValue() % (3 * h) != 0)
    return c.error("layout " + name + " needs Q = " + (sfirst ? "[S, B, 3E]" : "[B, S, 3E]") +
                   " with 3E a constant multiple of 3 * heads, got " + toString(q.dims));
  for (const SymDesc* o : {&k, &v}) {
    if (o->dtype != q.dtype || o->rank() != 3)
      return c.error("layout " + name + " needs K and V to be Q");
    for (int a = 0; a < 3; ++a)
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, o->dim(a), q.dim(a), "layout " + name + " needs K and V to be Q"));
  }
  const int64_t e = q.dim(2).constValue() / 3;
  if (sfirst) {
    OPFORGE_RETURN_IF_ERROR(
        checkElementCount(c, {q.dim(1), DimExpr(h), q.dim(0), q.dim(0)}, "the attention scores"));
    return SymDesc::make(q.dtype, {q.dim(0), q.dim(1), h, e / h});
  }
  OPFORGE_RETURN_IF_ERROR(
      checkElementCount(c, {q.dim(0), DimExpr(h), q.dim(1), q.dim(1)}, "the attention scores"));
  OPFORGE_RETURN_IF_ERROR(checkBias(c, q, {q.dim(0), DimExpr(h), q.dim(1), q.dim(1)}));
  return SymDesc::make(q.dtype, {q.dim(0), q.dim(1), h, e / h});
}

// The CPU tactics gather one head's Q, K^T, V, scores and O into scratch rows: refused past 2^34
// elements (the shape rules bound the scores at 2^40 elements, as any tensor, which one head's
// scratch may still not fit in memory).
Status scratchFits(const AttnGeom& g, const TensorDesc& q, const TensorDesc& k) {
  int64_t scratch = 0;
  for (const auto& [rows, cols] :
       {std::pair{g.sq, g.d}, std::pair{g.d, g.sk}, std::pair{g.sk, g.dv}, std::pair{g.sq, g.sk},
        std::pair{g.sq, g.dv}}) {
    int64_t n = 0;
    if (__builtin_mul_overflow(rows, cols, &n) || __builtin_add_overflow(scratch, n, &scratch))
      scratch = INT64_MAX;
  }
  if (scratch > (int64_t{1} << 34))
    return Status::outOfRange("FusedAttention: one head of Q " + dimsToString(q.dims) +
                              " against K " + dimsToString(k.dims) +
                              " needs more than 2^34 elements of CPU scratch");
  return Status::ok();
}

// cpu.sgemm: the same chain in float arithmetic per (batch, head) — Q, K and V gathered from their
// views into float rows, S = scale Q K^T and O = P V by sgemm (OpenBLAS where built with it), the
// bias and the softmax in float with the reference's rules (a NaN makes its row NaN, a row of
// -inf too; nan_to_zero), O rounded once to Y's type. The builder times it against the FP64
// reference and takes the faster (checked by test::checkOpTactics in fused_ops_test.cc).
Status attentionSgemm(KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) {
  const std::string layout = kc.attr<std::string>("layout");
  AttnGeom g = attnGeom(layout, kc.attr<int64_t>("heads"), kc.attr<int64_t>("k_transposed") != 0,
                        kc.attr<double>("scale"), in[0].desc, in[1].desc, in[2].desc);
  attnSetBias(g, layout, in[0].desc, in.size() > 3 ? &in[3].desc : nullptr,
              kc.attr<int64_t>("windows"));
  const bool nan_to_zero = kc.attr<int64_t>("nan_to_zero") != 0;
  if (out[0].numel() == 0) return Status::ok();  // no head to compute (an empty batch)
  OPFORGE_RETURN_IF_ERROR(scratchFits(g, in[0].desc, in[1].desc));
  std::vector<float> qb(g.sq * g.d), kb(g.sk * g.d), vb(g.sk * g.dv), sb(g.sq * g.sk),
      ob(g.sq * g.dv);
  return visitTypes<kFloats>(in[0].desc.dtype, "FusedAttention", [&](auto num) -> Status {
    using N = decltype(num);
    using C = typename N::C;
    auto gather = [&](const Tensor& t, const AttnView& w, int64_t b, int64_t h,
                      std::vector<float>& dst, int64_t cols) {
      const auto* p = ptrOf<N>(t);
      for (int64_t r = 0; r < static_cast<int64_t>(dst.size()) / cols; ++r)
        for (int64_t c = 0; c < cols; ++c)
          dst[r * cols + c] = static_cast<float>(N::load(p[attnAt(w, b, h, r, c)]));
    };
    auto* py = mutPtr<N>(out[0]);
    for (int64_t b = 0; b < g.B; ++b)
      for (int64_t h = 0; h < g.H; ++h) {
        gather(in[0], g.q, b, h, qb, g.d);
        gather(in[1], g.k, b, h, kb, g.d);  // K as [Sk, d] rows (a K^T view reads transposed)
        gather(in[2], g.v, b, h, vb, g.dv);
        sgemm(false, true, g.sq, g.sk, g.d, static_cast<float>(g.scale), qb.data(), g.d, kb.data(),
              g.d, 0.f, sb.data(), g.sk);
        const auto* pb = g.has_bias ? ptrOf<N>(in[3]) : nullptr;
        const int64_t brow = g.has_bias ? attnBiasRow(g.bias, b * g.H + h) : 0;
        for (int64_t i = 0; i < g.sq; ++i) {
          float* row = sb.data() + i * g.sk;
          if (pb)
            for (int64_t j = 0; j < g.sk; ++j)
              row[j] += static_cast<float>(N::load(pb[brow + i * g.bias.ss + j * g.bias.sk]));
          float m = -INFINITY;
          bool nan = false;
          for (int64_t j = 0; j < g.sk; ++j) {
            nan = nan || std::isnan(row[j]);
            m = row[j] > m ? row[j] : m;
          }
          float sum = 0;
          for (int64_t j = 0; j < g.sk; ++j) sum += (row[j] = std::exp(row[j] - m));
          for (int64_t j = 0; j < g.sk; ++j) {
            const float pij = nan ? NAN : row[j] / sum;  // -inf throughout: NaN already
            row[j] = nan_to_zero && std::isnan(pij) ? 0.f : pij;
          }
        }
        sgemm(false, false, g.sq, g.dv, g.sk, 1.f, sb.data(), g.sk, vb.data(), g.dv, 0.f, ob.data(),
              g.dv);
        for (int64_t i = 0; i < g.sq; ++i)
          for (int64_t c = 0; c < g.dv; ++c)
            py[attnAt(g.y, b, h, i, c)] = N::store(static_cast<C>(ob[i * g.dv + c]));
      }
    return Status::ok();
  });
}

constexpr int32_t kCpuSgemm = 1 << 30;  // ids from 1 << 30 up: further CPU tactics

}  // namespace

OPFORGE_OP(FusedAttention, "opforge::FusedAttention")
    .kind("attention")
    .doc("softmax(scale * Q K^T) V in one layer (built by the attention_fusion pass).")
    .input("Q", "[..., Sq, d]")
    .input("K", "[..., Sk, d], or [..., d, Sk] with k_transposed = 1")
    .input("V", "[..., Sk, dv]")
    .optionalInput("bias",
                   "broadcast to the scores [..., Sq, Sk] (bshd, bs3e: [B, H, Sq, Sk]), added "
                   "before the softmax (not sb3e)")
    .output("Y", "[..., Sq, dv]")
    .attr<double>("scale", 1.0)
    .attr<int64_t>("k_transposed", int64_t{0})
    .attr<std::string>("layout", std::string("bhsd"), "bhsd | bshd | sb3e | bs3e")
    .attr<int64_t>("nan_to_zero", int64_t{0},
                   "1: a NaN probability counts as 0 (Where(IsNaN(P), 0, P) of PyTorch's SDPA "
                   "export: a query that sees no key gives zeros)")
    .attr<int64_t>("heads", int64_t{0}, "sb3e, bs3e: the number of heads")
    .attr<int64_t>(
        "windows", int64_t{0},
        "W > 0: the bias is [W, H | 1, Sq, Sk] and batch b reads its row b mod W (Swin's "
        "shifted-window mask, the same for every image's W windows; the batch a "
        "multiple of W; not sb3e, bhsd of rank 4 only)")
    .check([](const AttrMap& a) -> Status {
      const auto l = a.get<std::string>("layout");
      if (l != "bhsd" && l != "sb3e" && l != "bshd" && l != "bs3e")
        return Status::invalid("attribute 'layout' must be bhsd, bshd, sb3e or bs3e, got '" + l +
                               "'");
      if (l == "bshd" && a.get<int64_t>("k_transposed") != 0)
        return Status::invalid("layout bshd needs k_transposed = 0");
      const int64_t heads = a.get<int64_t>("heads");
      if ((l == "sb3e" || l == "bs3e") &&
          (heads < 1 || heads > INT32_MAX || a.get<int64_t>("k_transposed") != 0))
        return Status::invalid(
            "layout " + l +
            " needs heads in [1, 2^31) and k_transposed = 0, got heads = " + std::to_string(heads));
      const int64_t z = a.get<int64_t>("nan_to_zero");
      if (z != 0 && z != 1)
        return Status::invalid("attribute 'nan_to_zero' must be 0 or 1, got " + std::to_string(z));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc q = c.input(0), k = c.input(1), v = c.input(2);
      const std::string layout = c.attr<std::string>("layout");
      if (c.hasInput(3) && layout == "sb3e")
        return c.error("input 'bias' needs layout bhsd, bshd or bs3e");
      if (layout == "bshd") return bshdShape(c);
      if (layout == "sb3e" || layout == "bs3e") return packedShape(c, layout == "sb3e");
      if (q.dtype != k.dtype || q.dtype != v.dtype)
        return c.error("Q, K and V must have one type, got " + dtypeName(q.dtype) + ", " +
                       dtypeName(k.dtype) + ", " + dtypeName(v.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'Q'", q.dtype, kFloats));
      if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
        return c.error("Q, K and V must have one rank >= 2, got " + toString(q.dims) + ", " +
                       toString(k.dims) + ", " + toString(v.dims));
      const bool kt = c.attr<int64_t>("k_transposed") != 0;
      const int r = q.rank();
      for (int a = 0; a + 2 < r; ++a) {
        OPFORGE_RETURN_IF_ERROR(requireEq(c, k.dim(a), q.dim(a), "K's leading axes must be Q's"));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(a), q.dim(a), "V's leading axes must be Q's"));
      }
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, kt ? k.dim(-2) : k.dim(-1), q.dim(-1), "K's head size must be Q's"));
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, kt ? k.dim(-1) : k.dim(-2), v.dim(-2), "K and V must have one length"));
      if (r - 2 > AttnBias::kMaxLead && c.hasInput(3))
        return c.error("input 'bias' needs Q to have at most " +
                       std::to_string(AttnBias::kMaxLead + 2) + " axes, got " + std::to_string(r));
      std::vector<DimExpr> scores(q.dims.begin(), q.dims.end() - 1);
      scores.push_back(kt ? k.dim(-1) : k.dim(-2));
      // The unfused chain's MatMul would write them: the same limit as any tensor's.
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, scores, "the attention scores"));
      OPFORGE_RETURN_IF_ERROR(checkBias(c, q, scores));
      SymDesc y = q.like();
      y.dims.back() = v.dim(-1);
      return y;
    })
    .combos(comboTypes(kFloats))
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      // S = MatMul(Q, K^T), S = Mul(S, scale), P = Softmax(S, axis -1), O = MatMul(P, V), each by
      // its op's reference. Precision: Q, K^T and V are gathered from their views into FP64
      // buffers (each input converted once), the chain runs in FP64 (products accumulated in
      // double) and O is rounded once to Y's type, as the single-loop reference did; the unfused
      // chain in FP32/FP16/BF16 would accumulate in float and round S and P to the storage type.
      const Tensor &q = in[0], &k = in[1], &v = in[2], &y = out[0];
      AttnGeom g = attnGeom(kc.attr<std::string>("layout"), kc.attr<int64_t>("heads"),
                            kc.attr<int64_t>("k_transposed") != 0, kc.attr<double>("scale"), q.desc,
                            k.desc, v.desc);
      attnSetBias(g, kc.attr<std::string>("layout"), q.desc, in.size() > 3 ? &in[3].desc : nullptr,
                  kc.attr<int64_t>("windows"));
      if (y.numel() == 0) return Status::ok();  // no head to compute (an empty batch)
      OPFORGE_RETURN_IF_ERROR(scratchFits(g, q.desc, k.desc));
      std::vector<double> qb, kb, vb, sb, ob;
      auto f64 = [](std::vector<double>& buf, int64_t rows, int64_t cols) {
        buf.resize(static_cast<size_t>(rows * cols));
        return Tensor{TensorDesc{DataType::kFloat64, {rows, cols}}, buf.data(), Device::kCpu};
      };
      const Tensor tq = f64(qb, g.sq, g.d), tkt = f64(kb, g.d, g.sk), tv = f64(vb, g.sk, g.dv),
                   ts = f64(sb, g.sq, g.sk), to = f64(ob, g.sq, g.dv);
      double scale = g.scale;
      const bool nan_to_zero = kc.attr<int64_t>("nan_to_zero") != 0;
      const Tensor tscale{TensorDesc{DataType::kFloat64, {}}, &scale, Device::kCpu};
      return visitTypes<kFloats>(q.desc.dtype, "FusedAttention", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        // dst[r][c] = element (r, c) of view w at (b, h); with `swap`, element (c, r) (K^T).
        auto gather = [&](const Tensor& t, const AttnView& w, int64_t b, int64_t h, bool swap,
                          std::vector<double>& dst, int64_t cols) {
          const auto* p = ptrOf<N>(t);
          for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
            const int64_t r = i / cols, c = i % cols;
            dst[i] = static_cast<double>(
                N::load(p[swap ? attnAt(w, b, h, c, r) : attnAt(w, b, h, r, c)]));
          }
        };
        auto* py = mutPtr<N>(y);
        for (int64_t b = 0; b < g.B; ++b)
          for (int64_t h = 0; h < g.H; ++h) {
            gather(q, g.q, b, h, false, qb, g.d);
            gather(k, g.k, b, h, true, kb, g.sk);
            gather(v, g.v, b, h, false, vb, g.dv);
            OPFORGE_RETURN_IF_ERROR(matmulReference(tq, tkt, ts));
            OPFORGE_RETURN_IF_ERROR(mulReference(ts, tscale, ts));
            if (g.has_bias) {
              const auto* pb = ptrOf<N>(in[3]);
              const int64_t row = attnBiasRow(g.bias, b * g.H + h);
              for (int64_t i = 0; i < g.sq; ++i)
                for (int64_t j = 0; j < g.sk; ++j)
                  sb[i * g.sk + j] +=
                      static_cast<double>(N::load(pb[row + i * g.bias.ss + j * g.bias.sk]));
            }
            OPFORGE_RETURN_IF_ERROR(softmaxReference(-1, ts, ts));
            if (nan_to_zero)
              for (double& p : sb)
                if (std::isnan(p)) p = 0;
            OPFORGE_RETURN_IF_ERROR(matmulReference(ts, tv, to));
            for (int64_t i = 0; i < g.sq; ++i)
              for (int64_t c = 0; c < g.dv; ++c)
                py[attnAt(g.y, b, h, i, c)] = N::store(static_cast<C>(ob[i * g.dv + c]));
          }
        return Status::ok();
      });
    })
    .tactic(kCpuSgemm, "cpu.sgemm", attentionSgemm);

}  // namespace opforge::ops
