// attention_views.h — where opforge::FusedAttention finds element (b, h, s, t) of Q, K, V and Y:
// base + off + b * sb + h * sh + s * ss + t * st, for both layouts:
//   bhsd  Q [..., Sq, d], K [..., Sk, d] (or K^T [..., d, Sk]), V [..., Sk, dv], Y [..., Sq, dv];
//   the
//         leading axes are one batch axis B (H = 1);
//   sb3e  the packed in_proj output of nn.MultiheadAttention, P [S, B, 3E] (Q = K = V = P, heads H,
//         d = E / H, Q / K / V the three E-wide thirds); Y [S, B, H, d];
//   bs3e  the same packed projection batch first, P [B, S, 3E] (a batch-first nn.MultiheadAttention
//         whose input transposes were folded, Q / K / V projections merged into one GEMM, GPT-2's
//         c_attn); Y [B, S, H, d];
//   bshd  the heads split but not moved, as the projections' Reshape gives them (transformers'
//         BERT, GPT-2, LLaMA...): Q [B, Sq, H, d], K [B, Sk, H, d], V [B, Sk, H, dv], Y [B, Sq, H,
//         dv] — the exporter's Transposes to [B, H, S, d] and back are read in place.
//   bias  (bhsd, bshd, bs3e) an additive term broadcast to the scores [..., Sq, Sk] (an attention
//   mask
//         as the exporters write it: 0 where a key is seen, -inf or a large negative number where
//         it is not): element (b, i, j) at attnBiasAt, b the flat batch index over Q's leading
//         axes.
#pragma once

#include <string>
#include <vector>

#include "../../common/dtype_dispatch.h"
#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE
#include "opforge/tensor.h"

namespace opforge::ops {

struct AttnView {
  int64_t off, sb, sh, ss, st;
};

// The bias over the scores: Q's leading axes (at most kMaxLead, from the outermost) with the
// bias's element strides over them (0 where it broadcasts), then its query and key strides.
struct AttnBias {
  static constexpr int kMaxLead = 6;
  int nlead = 0;
  int64_t dims[kMaxLead] = {}, st[kMaxLead] = {};
  int64_t ss = 0, sk = 0;
};

struct AttnGeom {
  int64_t B, H, sq, sk, d, dv;
  double scale;
  AttnView q, k, v, y;
  bool has_bias = false;
  AttnBias bias;
  bool nan_to_zero = false;  // a NaN probability counts as 0 (a row that sees no key: zeros)
};

inline AttnGeom attnGeom(const std::string& layout, int64_t heads, bool kt, double scale,
                         const TensorDesc& q, const TensorDesc& k, const TensorDesc& v) {
  AttnGeom g{};
  g.scale = scale;
  if (layout == "bshd") {  // Q [B, Sq, H, d], K [B, Sk, H, d], V [B, Sk, H, dv], Y [B, Sq, H, dv]
    g.B = q.dims[0], g.H = q.dims[2], g.sq = q.dims[1], g.d = q.dims[3];
    g.sk = v.dims[1], g.dv = v.dims[3];
    g.q = {0, g.sq * g.H * g.d, g.d, g.H * g.d, 1};
    g.k = {0, g.sk * g.H * g.d, g.d, g.H * g.d, 1};
    g.v = {0, g.sk * g.H * g.dv, g.dv, g.H * g.dv, 1};
    g.y = {0, g.sq * g.H * g.dv, g.dv, g.H * g.dv, 1};
    (void)k;
    return g;
  }
  if (layout == "sb3e" || layout == "bs3e") {
    const bool sfirst = layout == "sb3e";
    const int64_t S = q.dims[sfirst ? 0 : 1], B = q.dims[sfirst ? 1 : 0], E = q.dims[2] / 3,
                  H = heads > 0 ? heads : 1, d = E / H;
    g.B = B, g.H = H, g.sq = g.sk = S, g.d = g.dv = d;
    // strides of b and s in P and in Y ([S, B, H, d] or [B, S, H, d])
    const int64_t pb = sfirst ? 3 * E : S * 3 * E, ps = sfirst ? B * 3 * E : 3 * E;
    const int64_t yb = sfirst ? H * d : S * H * d, ys = sfirst ? B * H * d : H * d;
    g.q = {0, pb, d, ps, 1};
    g.k = {E, pb, d, ps, 1};
    g.v = {2 * E, pb, d, ps, 1};
    g.y = {0, yb, d, ys, 1};
    return g;
  }
  const int r = q.rank();
  int64_t batch = 1;
  for (int a = 0; a + 2 < r; ++a) batch *= q.dims[a];
  g.B = batch, g.H = 1;
  g.sq = q.dims[r - 2], g.d = q.dims[r - 1], g.sk = v.dims[r - 2], g.dv = v.dims[r - 1];
  g.q = {0, g.sq * g.d, 0, g.d, 1};
  g.k = kt ? AttnView{0, g.d * g.sk, 0, 1, g.sk} : AttnView{0, g.sk * g.d, 0, g.d, 1};
  g.v = {0, g.sk * g.dv, 0, g.dv, 1};
  g.y = {0, g.sq * g.dv, 0, g.dv, 1};
  (void)k;
  return g;
}

// The bias's strides for scores [lead..., Sq, Sk] (the shape rule checked that it broadcasts and
// that the scores have at most AttnBias::kMaxLead leading axes).
inline AttnBias attnBias(const std::vector<int64_t>& scores, const TensorDesc& bias) {
  const std::vector<int64_t> st = broadcastStrides(bias.dims, scores);
  AttnBias w;
  const int r = static_cast<int>(scores.size());
  w.nlead = r - 2;
  for (int a = 0; a < w.nlead && a < AttnBias::kMaxLead; ++a)
    w.dims[a] = scores[a], w.st[a] = st[a];
  w.ss = st[r - 2], w.sk = st[r - 1];
  return w;
}

// g's bias from the op's inputs (Q, K, V[, bias]; an absent bias has an undefined dtype). With
// `windows` W > 0 (attribute `windows`, Swin's shifted windows) the bias is [W, H | 1, Sq, Sk] and
// batch b (the flat batch index, layouts other than bhsd, or bhsd of rank 4) reads its row b mod W.
inline void attnSetBias(AttnGeom& g, const std::string& layout, const TensorDesc& q,
                        const TensorDesc* bias, int64_t windows = 0) {
  g.has_bias = bias != nullptr && bias->dtype != DataType::kUndefined;
  if (!g.has_bias) return;
  std::vector<int64_t> scores = {g.B, g.H, g.sq, g.sk};  // bshd, bs3e
  if (layout == "bhsd") {
    scores.assign(q.dims.begin(), q.dims.end() - 1);
    scores.push_back(g.sk);
  }
  if (windows > 0) scores[0] = windows;  // attnBiasRow walks axis 0 cyclically: b mod W
  g.bias = attnBias(scores, *bias);
}

OPFORGE_HOST_DEVICE inline int64_t attnBiasRow(const AttnBias& w, int64_t b) {
  int64_t off = 0;
  for (int a = w.nlead - 1; a >= 0; --a) {
    const int64_t n = w.dims[a];
    off += (b % n) * w.st[a];
    b /= n;
  }
  return off;
}

OPFORGE_HOST_DEVICE inline int64_t attnAt(const AttnView& w, int64_t b, int64_t h, int64_t s,
                                          int64_t t) {
  return w.off + b * w.sb + h * w.sh + s * w.ss + t * w.st;
}

}  // namespace opforge::ops
