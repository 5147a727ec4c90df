// conv_cpu.h — Conv's shape rule and CPU kernels (shared by the reference and opforge::FusedConv):
// the geometry, the tap table, the direct loop (double accumulation) and the FP32 im2col + sgemm
// path.
#pragma once

#include "../common/linalg.h"
#include "../common/pool.h"

namespace opforge::ops {

// The tactics that take channels-last (HWC) tensors, shared by Conv and opforge::FusedConv
// (conv_tactics.cuh registers them): cuDNN's graph engines (7-18, 32-51), the cuBLASLt 1x1 GEMMs
// (19-26), the depthwise kernels (27-29, 53) and the tensor-core 1x1 GEMMs (30-31, 52).
inline std::vector<int32_t> hwcConvTactics() {
  std::vector<int32_t> ids;
  for (int32_t id = 7; id <= 53; ++id) ids.push_back(id);
  return ids;
}

struct ConvGeom {
  Window w;
  int64_t n, c, m, g, cg, mg, ip, op, taps;
  std::vector<int64_t> isz, osz;
};

inline Result<ConvGeom> convGeom(const AttrMap& a, const TensorDesc& x, const TensorDesc& wt,
                                 const TensorDesc& y) {
  ConvGeom g;
  const int nd = x.rank() - 2;
  std::vector<int64_t> kernel(wt.dims.begin() + 2, wt.dims.end());
  OPFORGE_ASSIGN_OR_RETURN(g.w, readWindow(a, nd, kernel, false));
  g.isz.assign(x.dims.begin() + 2, x.dims.end());
  g.osz.assign(y.dims.begin() + 2, y.dims.end());
  resolvePads(g.w, g.isz);
  g.n = x.dims[0];
  g.c = x.dims[1];
  g.m = wt.dims[0];
  g.g = a.get<int64_t>("group");
  g.cg = g.c / g.g;
  g.mg = g.m / g.g;
  g.ip = prodOf(g.isz, 0, nd);
  g.op = prodOf(g.osz, 0, nd);
  g.taps = prodOf(kernel, 0, nd);
  return g;
}

// The CPU kernels work on blocks of output positions so that the tap table (taps x positions
// int64) and the FP32 path's column matrix (C/group x taps x positions floats) stay under
// kConvBlockEntries entries however large the geometry (a hostile one made taps x positions
// overflow int64 and the table ask for terabytes).
constexpr int64_t kConvBlockEntries = int64_t{1} << 22;

// Output positions per block: at least one.
inline int64_t convBlock(const ConvGeom& g) {
  const int64_t per_position = std::max<int64_t>(1, std::max(g.taps, g.cg * g.taps));
  return std::max<int64_t>(1, std::min(g.op, kConvBlockEntries / per_position));
}

// Input coordinates of every (tap, output position) for the output positions [o0, o1): row t
// holds tap t's flat index into an input plane per position, or -1 in padding.
inline void tapIndex(const ConvGeom& g, int64_t o0, int64_t o1, std::vector<int64_t>& idx) {
  const Window& w = g.w;
  const int64_t len = o1 - o0;
  idx.resize(static_cast<size_t>(g.taps * len));
  std::vector<int64_t> j(w.nd, 0), pos(w.nd);
  for (int64_t t = 0; t < g.taps; ++t) {
    int64_t rest = o0;  // o0's coordinates
    for (int a = w.nd - 1; a >= 0; --a) {
      pos[a] = rest % g.osz[a];
      rest /= g.osz[a];
    }
    for (int64_t o = 0; o < len; ++o) {
      int64_t flat = 0;
      for (int a = 0; a < w.nd; ++a) {
        const int64_t q = pos[a] * w.s[a] - w.pb[a] + j[a] * w.d[a];
        if (q < 0 || q >= g.isz[a]) {
          flat = -1;
          break;
        }
        flat = flat * g.isz[a] + q;
      }
      idx[t * len + o] = flat;
      for (int a = w.nd - 1; a >= 0; --a) {
        if (++pos[a] < g.osz[a]) break;
        pos[a] = 0;
      }
    }
    for (int a = w.nd - 1; a >= 0; --a) {
      if (++j[a] < w.k[a]) break;
      j[a] = 0;
    }
  }
}

// The direct loop over the output positions [o0, o1) (tap: tapIndex of that block).
template <typename N>
inline void convReference(const ConvGeom& g, const std::vector<int64_t>& tap, int64_t o0,
                          int64_t o1, const Tensor& x, const Tensor& wt, const Tensor* b,
                          const Tensor& y) {
  using C = typename N::C;
  const auto* px = ptrOf<N>(x);
  const auto* pw = ptrOf<N>(wt);
  auto* py = mutPtr<N>(y);
  const int64_t len = o1 - o0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m) {
      const int64_t grp = m / g.mg;
      for (int64_t o = o0; o < o1; ++o) {
        double s = b ? static_cast<double>(N::load(ptrOf<N>(*b)[m])) : 0.0;
        for (int64_t c = 0; c < g.cg; ++c) {
          const auto* xp = px + (n * g.c + grp * g.cg + c) * g.ip;
          const auto* wp = pw + (m * g.cg + c) * g.taps;
          for (int64_t t = 0; t < g.taps; ++t) {
            const int64_t i = tap[t * len + (o - o0)];
            if (i >= 0)
              s += static_cast<double>(N::load(xp[i])) * static_cast<double>(N::load(wp[t]));
          }
        }
        py[(n * g.m + m) * g.op + o] = N::store(static_cast<C>(s));
      }
    }
}

// FP32 / FP64 (T) over the output positions [o0, o1): per image and group, columns[cg * taps,
// positions] = im2col(x), y = W_g [mg, cg * taps] x columns.
template <typename T>
inline void convFast(const ConvGeom& g, const std::vector<int64_t>& tap, int64_t o0, int64_t o1,
                     const Tensor& x, const Tensor& wt, const Tensor* b, const Tensor& y,
                     std::vector<T>& cols) {
  const T* px = x.as<T>();
  const T* pw = wt.as<T>();
  T* py = y.as<T>();
  const int64_t kdim = g.cg * g.taps, len = o1 - o0;
  bool direct = g.taps == 1;  // 1x1, stride 1, no padding: the input is its own column matrix
  for (int a = 0; a < g.w.nd && direct; ++a)
    direct = g.w.s[a] == 1 && g.w.pb[a] == 0 && g.osz[a] == g.isz[a];
  cols.resize(direct ? 0 : static_cast<size_t>(kdim * len));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t grp = 0; grp < g.g; ++grp) {
      const T* xg = px + (n * g.c + grp * g.cg) * g.ip;
      const T* colp = xg + o0;
      int64_t ldcol = g.op;
      if (!direct) {
        for (int64_t c = 0; c < g.cg; ++c)
          for (int64_t t = 0; t < g.taps; ++t) {
            T* row = cols.data() + (c * g.taps + t) * len;
            const int64_t* ti = tap.data() + t * len;
            const T* xp = xg + c * g.ip;
            for (int64_t o = 0; o < len; ++o) row[o] = ti[o] >= 0 ? xp[ti[o]] : T(0);
          }
        colp = cols.data();
        ldcol = len;
      }
      T* yg = py + (n * g.m + grp * g.mg) * g.op + o0;
      if constexpr (std::is_same_v<T, float>)
        sgemm(false, false, g.mg, len, kdim, 1.f, pw + grp * g.mg * kdim, kdim, colp, ldcol, 0.f,
              yg, g.op);
      else
        dgemm(false, false, g.mg, len, kdim, 1.0, pw + grp * g.mg * kdim, kdim, colp, ldcol, 0.0,
              yg, g.op);
      if (b)
        for (int64_t m = 0; m < g.mg; ++m) {
          const T bias = b->as<T>()[grp * g.mg + m];
          for (int64_t o = 0; o < len; ++o) yg[m * g.op + o] += bias;
        }
    }
}

// Conv's CPU kernel (also opforge::FusedConv's before its epilogue): block by block, FP32 and
// FP64 on the im2col + sgemm / dgemm path unless naive kernels are requested, other types (and
// naive) on the direct loop.
inline Status convCpu(const ConvGeom& g, const Tensor& x, const Tensor& wt, const Tensor* b,
                      const Tensor& y, const char* op) {
  if (y.numel() == 0) return Status::ok();
  const bool f32 = x.desc.dtype == DataType::kFloat32, f64 = x.desc.dtype == DataType::kFloat64;
  const bool fast = (f32 || f64) && !naiveKernels();
  const int64_t block = convBlock(g);
  std::vector<int64_t> tap;
  std::vector<float> cols;
  std::vector<double> cols64;
  for (int64_t o0 = 0; o0 < g.op; o0 += block) {
    const int64_t o1 = std::min(g.op, o0 + block);
    tapIndex(g, o0, o1, tap);
    if (fast) {
      if (f32)
        convFast<float>(g, tap, o0, o1, x, wt, b, y, cols);
      else
        convFast<double>(g, tap, o0, o1, x, wt, b, y, cols64);
      continue;
    }
    OPFORGE_RETURN_IF_ERROR(visitTypes<kFloats>(x.desc.dtype, op, [&](auto num) -> Status {
      convReference<decltype(num)>(g, tap, o0, o1, x, wt, b, y);
      return Status::ok();
    }));
  }
  return Status::ok();
}

// The output dims of a convolution of x by w: ranks, static kernel, group, window; no types
// (Conv's shape rule, and the integer and quantized convolutions').
inline Result<std::vector<DimExpr>> convOutDims(ShapeContext& c, const SymDesc& x,
                                                const SymDesc& w) {
  if (x.rank() < 3)
    return c.error("input 'X' must have rank >= 3 (N, C, D1, ...), got " + toString(x.dims));
  if (w.rank() != x.rank())
    return c.error("input 'W' " + toString(w.dims) + " must have the rank of X " +
                   toString(x.dims));
  const int nd = x.rank() - 2;
  std::vector<int64_t> kernel;
  for (int i = 0; i < nd; ++i) {
    if (!w.dim(2 + i).isConst())
      return c.error("the kernel size of W must be static, got " + toString(w.dims));
    kernel.push_back(w.dim(2 + i).constValue());
  }
  if (c.attrs().has("kernel_shape") && c.attr<std::vector<int64_t>>("kernel_shape") != kernel)
    return c.error("attribute 'kernel_shape' does not match W " + toString(w.dims));
  const int64_t group = c.attr<int64_t>("group");
  if (group < 1) return c.error("attribute 'group' must be >= 1, got " + std::to_string(group));
  OPFORGE_RETURN_IF_ERROR(requireEq(
      c, x.dim(1), w.dim(1) * group,
      "the channels of X must equal dim 1 of W times group (" + std::to_string(group) + ")"));
  if (w.dim(0).isConst() && w.dim(0).constValue() % group != 0)
    return c.error("the output channels of W (" + w.dim(0).toString() +
                   ") are not divisible by group");
  auto win = readWindow(c.attrs(), nd, kernel, false);
  if (!win) return c.error(win.status().message());
  std::vector<DimExpr> in(x.dims.begin() + 2, x.dims.end());
  auto out = windowOutDims(*win, in);
  // A kernel larger than the padded input leaves no output position (ONNX Runtime: "Invalid
  // input shape"): an error, not an empty tensor.
  for (int i = 0; i < nd; ++i) {
    const std::string msg = "spatial axis " + std::to_string(i) + " (input " + in[i].toString() +
                            ", kernel " + std::to_string(kernel[i]) + ") leaves output size " +
                            out[i].toString() + "; the padded input must cover the dilated kernel";
    if (out[i].isConst() && out[i].constValue() < 1) return c.error(msg);
    if (!out[i].isConst()) c.require(1, DimAssertion::Op::kLe, out[i], msg);
  }
  std::vector<DimExpr> dims{x.dim(0), w.dim(0)};
  dims.insert(dims.end(), out.begin(), out.end());
  return dims;
}

// A convolution's bias, input `i`: 1-D [M] (M = dim 0 of W) of type `t`.
inline Status checkConvBias(ShapeContext& c, int i, const SymDesc& w, DataType t) {
  SymDesc b = c.input(i);
  if (b.dtype != t || b.rank() != 1)
    return c.error("input 'B' must be 1-D [M] of " + dtypeName(t) + ", got " + dtypeName(b.dtype) +
                   " " + toString(b.dims));
  return requireEq(c, b.dim(0), w.dim(0), "input 'B' must have M = dim 0 of W elements");
}

// Conv's shape rule (also opforge::FusedConv's).
inline Result<SymDesc> convShape(ShapeContext& c) {
  SymDesc x = c.input(0), w = c.input(1);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
  if (w.dtype != x.dtype)
    return c.error("input 'W' has type " + dtypeName(w.dtype) + "; X has " + dtypeName(x.dtype));
  OPFORGE_ASSIGN_OR_RETURN(auto dims, convOutDims(c, x, w));  // checks W's rank first
  if (c.hasInput(2)) OPFORGE_RETURN_IF_ERROR(checkConvBias(c, 2, w, x.dtype));
  return SymDesc::make(x.dtype, std::move(dims));
}

}  // namespace opforge::ops
