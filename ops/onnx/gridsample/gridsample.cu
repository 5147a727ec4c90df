// CUDA tactic of ai.onnx::GridSample: one thread per output element, the reference's arithmetic in
// double (unnormalisation, border / reflection / zeros padding, nearest half to even, (tri)linear
// corners, bicubic 4x4 Keys taps with A = -0.75), 2-D and 3-D.
#include "../common/cuda_common.cuh"
#include "gridsample_reflect.h"

namespace opforge::ops {
namespace {

struct GsGeom {
  int nd, mode, pad;  // mode 0 nearest, 1 linear, 2 cubic; pad 0 zeros, 1 border, 2 reflection
  bool ac;
  int64_t n, ch, plane, points;
  int64_t size[3], stride[3];
};

__device__ double clampD(double v, double lo, double hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__device__ double padCoord(const GsGeom& g, double v, int64_t sz) {
  if (g.pad == 1) return clampD(v, 0.0, static_cast<double>(sz - 1));
  if (g.pad == 2) {
    v = g.ac ? gridsample::reflect(v, 0, static_cast<double>(sz - 1))
             : gridsample::reflect(v, -0.5, static_cast<double>(sz) - 0.5);
    return clampD(v, 0.0, static_cast<double>(sz - 1));
  }
  return v;
}

template <typename S>
__device__ double pixel(const GsGeom& g, const S* base, const int64_t* c) {
  int64_t off = 0;
  for (int i = 0; i < g.nd; ++i) {
    int64_t q = c[i];
    if (g.pad == 0) {
      if (q < 0 || q >= g.size[i]) return 0.0;
    } else if (g.pad == 1) {
      q = q < 0 ? 0 : q >= g.size[i] ? g.size[i] - 1 : q;
    } else {
      q = llround(padCoord(g, static_cast<double>(q), g.size[i]));
    }
    off += q * g.stride[i];
  }
  return static_cast<double>(DNum<S>::load(base[off]));
}

__device__ void cubicCoeffs(double t, double* c4) {
  const double A = -0.75;
  auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
  auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
  c4[0] = far(t + 1);
  c4[1] = near(t);
  c4[2] = near(1 - t);
  c4[3] = far(2 - t);
}

__device__ int64_t floorIndex(double v) {
  if (!(v == v)) return 0;
  const double f = floor(v);
  return f < -4e18 ? INT64_MIN / 2 : f > 4e18 ? INT64_MAX / 2 : static_cast<int64_t>(f);
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    gridSampleKernel(const S* __restrict__ x, const S* __restrict__ grid, S* __restrict__ y,
                     GsGeom g) {
  const int64_t total = g.n * g.ch * g.points, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t i = idx % g.points, t = idx / g.points, c = t % g.ch, b = t / g.ch;
    const S* gp = grid + (b * g.points + i) * g.nd;
    double coord[3];
    int64_t c0[3], cc[3];
    // The reference's rules: a NaN coordinate (an infinite one under reflection) gives NaN; a
    // coordinate is clamped to 8 pixels outside before its floor (bicubic under reflection: to
    // 2^40 pixels, its taps are mirrored one by one).
    bool undefined = false;
    for (int d = 0; d < g.nd; ++d) {
      const double v = static_cast<double>(DNum<S>::load(gp[d]));
      const double sz = static_cast<double>(g.size[d]);
      coord[d] = g.ac ? (v + 1) / 2 * (sz - 1) : ((v + 1) * sz - 1) / 2;
      undefined |= isnan(coord[d]) || (g.pad == 2 && isinf(coord[d]));
      if (undefined) break;
      if (g.mode != 2) coord[d] = padCoord(g, coord[d], g.size[d]);
      coord[d] = g.mode == 2 && g.pad == 2 ? clampD(coord[d], -1099511627776.0, 1099511627776.0)
                                           : clampD(coord[d], -8.0, sz + 8);
      c0[d] = floorIndex(coord[d]);
    }
    const S* base = x + (b * g.ch + c) * g.plane;
    double v = 0;
    if (undefined) {
      v = __longlong_as_double(0x7ff8000000000000LL);  // quiet NaN
    } else if (g.mode == 0) {
      for (int d = 0; d < g.nd; ++d)
        cc[d] = coord[d] == coord[d] ? static_cast<int64_t>(rint(coord[d])) : 0;
      v = pixel(g, base, cc);
    } else if (g.mode == 1) {
      for (int corner = 0; corner < (1 << g.nd); ++corner) {
        double w = 1;
        for (int d = 0; d < g.nd; ++d) {
          const bool hi = (corner >> d) & 1;
          const double tt = coord[d] - static_cast<double>(c0[d]);
          cc[d] = c0[d] + (hi ? 1 : 0);
          w *= hi ? tt : 1 - tt;
        }
        if (w != 0) v += w * pixel(g, base, cc);
      }
    } else {
      double cx[4], cy[4];
      cubicCoeffs(coord[0] - static_cast<double>(c0[0]), cx);
      cubicCoeffs(coord[1] - static_cast<double>(c0[1]), cy);
      for (int dy = 0; dy < 4; ++dy)
        for (int dx = 0; dx < 4; ++dx) {
          cc[0] = c0[0] - 1 + dx;
          cc[1] = c0[1] - 1 + dy;
          v += cy[dy] * cx[dx] * pixel(g, base, cc);
        }
    }
    y[idx] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
  }
}

Status gridSampleCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &grid = in[1], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  GsGeom g{};
  const std::string m = k.attr<std::string>("mode"), p = k.attr<std::string>("padding_mode");
  g.mode = (m == "bilinear" || m == "linear") ? 1 : m == "nearest" ? 0 : 2;
  g.pad = p == "border" ? 1 : p == "reflection" ? 2 : 0;
  g.ac = k.attr<int64_t>("align_corners") != 0;
  g.nd = x.desc.rank() - 2;
  if (g.nd == 3 && g.mode == 2)
    return Status::unsupported("cubic GridSample is defined for 2-D input only");
  g.n = x.desc.dims[0];
  g.ch = x.desc.dims[1];
  g.plane = prodOf(x.desc.dims, 2, x.desc.rank());
  g.points = prodOf(grid.desc.dims, 1, grid.desc.rank() - 1);
  const auto xs = stridesOf(x.desc.dims);
  for (int i = 0; i < g.nd; ++i) {
    g.size[i] = x.desc.dims[x.desc.rank() - 1 - i];
    g.stride[i] = xs[x.desc.rank() - 1 - i];
  }
  return visitDevice<kFloats>(x.desc.dtype, "GridSample", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    gridSampleKernel<S><<<blocksFor(y.numel()), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(x.data), static_cast<const S*>(grid.data), static_cast<S*>(y.data),
        g);
    return launched("GridSample");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::GridSample",
                [](OpDef& d) { d.tactic(1, "cuda.sample", gridSampleCuda, linearOnly); });

}  // namespace opforge::ops
