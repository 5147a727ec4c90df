// attention_views.h — where opforge::FusedAttention finds element (b, h, s, t) of Q, K, V and Y:
// base + off + b * sb + h * sh + s * ss + t * st, for both layouts:
//   bhsd  Q [..., Sq, d], K [..., Sk, d] (or K^T [..., d, Sk]), V [..., Sk, dv], Y [..., Sq, dv];
//   the
//         leading axes are one batch axis B (H = 1);
//   sb3e  the packed in_proj output of nn.MultiheadAttention, P [S, B, 3E] (Q = K = V = P, heads H,
//         d = E / H, Q / K / V the three E-wide thirds); Y [S, B, H, d].
#pragma once

#include <string>

#include "opforge/tensor.h"

#if defined(__CUDACC__)
#define OPFORGE_ATTN_HD __host__ __device__
#else
#define OPFORGE_ATTN_HD
#endif

namespace opforge::ops {

struct AttnView {
  int64_t off, sb, sh, ss, st;
};

struct AttnGeom {
  int64_t B, H, sq, sk, d, dv;
  double scale;
  AttnView q, k, v, y;
};

inline AttnGeom attnGeom(const std::string& layout, int64_t heads, bool kt, double scale,
                         const TensorDesc& q, const TensorDesc& k, const TensorDesc& v) {
  AttnGeom g{};
  g.scale = scale;
  if (layout == "sb3e") {
    const int64_t S = q.dims[0], B = q.dims[1], E = q.dims[2] / 3, H = heads > 0 ? heads : 1,
                  d = E / H;
    g.B = B, g.H = H, g.sq = g.sk = S, g.d = g.dv = d;
    const int64_t row = B * 3 * E;  // stride of s in P
    g.q = {0, 3 * E, d, row, 1};
    g.k = {E, 3 * E, d, row, 1};
    g.v = {2 * E, 3 * E, d, row, 1};
    g.y = {0, H * d, d, B * H * d, 1};  // Y [S, B, H, d]
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

OPFORGE_ATTN_HD inline int64_t attnAt(const AttnView& w, int64_t b, int64_t h, int64_t s,
                                      int64_t t) {
  return w.off + b * w.sb + h * w.sh + s * w.ss + t * w.st;
}

}  // namespace opforge::ops
