// matmul_plan.h — numpy MatMul (1-D promotion, broadcast batch axes) as a list of strided-batch
// GEMMs for gemm_cuda.h: usually one (a shared B folds the batch into M), else one per outer batch
// coordinate that a single stride can not express.
#pragma once

#include "gemm_cuda.h"
#include "util.h"

namespace opforge::ops {

struct MatMulPlan {
  GemmArgs g;                                // pointers unset; offsets below are added per call
  std::vector<int64_t> a_off, b_off, y_off;  // element offsets of each call
};

inline Result<MatMulPlan> planMatMul(const TensorDesc& a, const TensorDesc& b, DataType t) {
  std::vector<int64_t> ad = a.dims, bd = b.dims;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  MatMulPlan p;
  GemmArgs& g = p.g;
  g.dtype = t;
  g.m = ad[ad.size() - 2];
  g.k = ad.back();
  g.n = bd.back();
  if (bd[bd.size() - 2] != g.k) return Status::invalid("MatMul: inner dimensions differ");
  g.lda = g.k;
  g.ldb = g.n;
  g.ldy = g.n;
  std::vector<int64_t> ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
  const size_t r = std::max(ab.size(), bb.size());
  std::vector<int64_t> yb(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + ab.size() >= r ? ab[i + ab.size() - r] : 1;
    const int64_t z = i + bb.size() >= r ? bb[i + bb.size() - r] : 1;
    yb[i] = x == 1 ? z : x;
  }
  int64_t nb = 1;
  for (int64_t d : yb) nb *= d;
  // Batch strides in matrices, coalesced.
  auto as = broadcastStrides(ab, yb), bs = broadcastStrides(bb, yb);
  std::vector<int64_t> dims;
  std::vector<int64_t> sa, sb, sy;
  int64_t ys = 1;
  std::vector<int64_t> ystr(r);
  for (int i = static_cast<int>(r) - 1; i >= 0; --i) ystr[i] = ys, ys *= yb[i];
  for (size_t i = 0; i < r; ++i) {
    if (yb[i] == 1) continue;
    if (!dims.empty() && sa.back() == as[i] * yb[i] && sb.back() == bs[i] * yb[i] &&
        sy.back() == ystr[i] * yb[i]) {
      dims.back() *= yb[i];
      sa.back() = as[i], sb.back() = bs[i], sy.back() = ystr[i];
    } else {
      dims.push_back(yb[i]), sa.push_back(as[i]), sb.push_back(bs[i]), sy.push_back(ystr[i]);
    }
  }
  const int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  if (dims.empty()) {
    g.batch = 1;
    p.a_off = p.b_off = p.y_off = {0};
    return p;
  }
  // Innermost coalesced batch axis: one strided call per outer coordinate.
  const size_t last = dims.size() - 1;
  g.batch = dims[last];
  g.a_stride = sa[last] * mk;
  g.b_stride = sb[last] * kn;
  g.y_stride = sy[last] * mn;
  int64_t outer = 1;
  for (size_t i = 0; i < last; ++i) outer *= dims[i];
  if (outer > 4096)
    return Status::unsupported("MatMul (CUDA): more than 4096 separately strided batches");
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rem = o, oa = 0, ob = 0, oy = 0;
    for (int i = static_cast<int>(last) - 1; i >= 0; --i) {
      const int64_t c = rem % dims[i];
      rem /= dims[i];
      oa += c * sa[i] * mk, ob += c * sb[i] * kn, oy += c * sy[i] * mn;
    }
    p.a_off.push_back(oa), p.b_off.push_back(ob), p.y_off.push_back(oy);
  }
  // A contiguous over the batch with B shared: one GEMM with M = batch * m.
  if (p.a_off.size() == 1 && g.b_stride == 0 && g.a_stride == mk && g.y_stride == mn && !g.ta) {
    g.m *= g.batch;
    g.batch = 1;
    g.a_stride = g.y_stride = 0;
  }
  (void)nb;
  return p;
}

}  // namespace opforge::ops
