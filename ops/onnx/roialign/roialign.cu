// CUDA tactic of ai.onnx::RoiAlign, cuda.direct: a thread per output element (region, channel,
// bin) samples its bin's grid by bilinear interpolation. Region, bin and sample coordinates are
// computed in double with every operation rounded on its own (no FMA contraction), as the
// reference computes them, so the discrete choices (the adaptive sample count, the corner pixels,
// which samples fall outside the image) are the reference's; the weighted sums are in double. A
// batch index outside [0, N) is reported through the device error record and read as 0.
#include "../common/cuda_common.cuh"
#include "roialign.h"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t n, ch, h, w, rois, oh, ow, ratio;
  double scale, offset;
  bool half, avg;
};

template <typename S>
__global__ void __launch_bounds__(kThreads)
    roiAlignKernel(const S* __restrict__ x, const S* __restrict__ rois,
                   const int64_t* __restrict__ bidx, S* __restrict__ y, Geom g,
                   DeviceErrorRecord* rec) {
  const int64_t total = g.rois * g.ch * g.oh * g.ow, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t j = t % g.ow, i = (t / g.ow) % g.oh, c = (t / (g.ow * g.oh)) % g.ch,
                  r = t / (g.ow * g.oh * g.ch);
    int64_t b = bidx[r];
    if (b < 0 || b >= g.n) {
      if (c == 0 && i == 0 && j == 0)
        reportDeviceError(rec, kDeviceErrorRegion, 2, b, r, g.n, 0, 1, 0);
      b = 0;
    }
    auto coord = [&](int e) {
      return __dsub_rn(__dmul_rn(static_cast<double>(DNum<S>::load(rois[4 * r + e])), g.scale),
                       g.offset);
    };
    const double x0 = coord(0), y0 = coord(1);
    double rw = __dsub_rn(coord(2), x0), rh = __dsub_rn(coord(3), y0);
    if (!g.half) {
      rw = rw < 1.0 ? 1.0 : rw;
      rh = rh < 1.0 ? 1.0 : rh;
    }
    const double bh = __ddiv_rn(rh, static_cast<double>(g.oh)),
                 bw = __ddiv_rn(rw, static_cast<double>(g.ow));
    // The reference's bounds (roialign.h): a region with a NaN coordinate or size, or one whose
    // adaptive grid needs more than 2^20 samples per bin (a region of 1e30 pixels would loop for
    // ever), is reported (the reference refuses it) and its bins read 0.
    const bool nan = isnan(x0) || isnan(y0) || isnan(bh) || isnan(bw);
    const double gh_d = roiAxisSamples(g.ratio, bh), gw_d = roiAxisSamples(g.ratio, bw);
    if (nan || !roiGridFits(gh_d, gw_d)) {
      if (c == 0 && i == 0 && j == 0)
        reportDeviceError(rec, kDeviceErrorLimit, 1,
                          nan ? -1 : static_cast<int64_t>(fmin(gh_d * gw_d, 9.0e18)), 4 * r,
                          kMaxBinSamples, 0);
      y[t] = DNum<S>::store(static_cast<typename DNum<S>::C>(0.0));
      continue;
    }
    const auto gh = static_cast<int64_t>(gh_d), gw = static_cast<int64_t>(gw_d);
    const S* plane = x + (b * g.ch + c) * g.h * g.w;
    const double fh = static_cast<double>(g.h), fw = static_cast<double>(g.w);
    double acc = 0;
    bool first = true;
    for (int64_t a = 0; a < gh; ++a) {
      const double yy = __dadd_rn(
          __dadd_rn(y0, __dmul_rn(static_cast<double>(i), bh)),
          __ddiv_rn(__dmul_rn(static_cast<double>(a) + 0.5, bh), static_cast<double>(gh)));
      for (int64_t e = 0; e < gw; ++e) {
        const double xx = __dadd_rn(
            __dadd_rn(x0, __dmul_rn(static_cast<double>(j), bw)),
            __ddiv_rn(__dmul_rn(static_cast<double>(e) + 0.5, bw), static_cast<double>(gw)));
        double v[4] = {0, 0, 0, 0};
        if (!(yy < -1.0 || yy > fh || xx < -1.0 || xx > fw)) {
          double sy = yy < 0 ? 0 : yy, sx = xx < 0 ? 0 : xx;
          int64_t ylo = static_cast<int64_t>(sy), xlo = static_cast<int64_t>(sx), yhi, xhi;
          if (ylo >= g.h - 1) {
            ylo = yhi = g.h - 1;
            sy = static_cast<double>(ylo);
          } else {
            yhi = ylo + 1;
          }
          if (xlo >= g.w - 1) {
            xlo = xhi = g.w - 1;
            sx = static_cast<double>(xlo);
          } else {
            xhi = xlo + 1;
          }
          const double ly = __dsub_rn(sy, static_cast<double>(ylo)),
                       lx = __dsub_rn(sx, static_cast<double>(xlo));
          const double hy = __dsub_rn(1.0, ly), hx = __dsub_rn(1.0, lx);
          v[0] = __dmul_rn(__dmul_rn(hy, hx),
                           static_cast<double>(DNum<S>::load(plane[ylo * g.w + xlo])));
          v[1] = __dmul_rn(__dmul_rn(hy, lx),
                           static_cast<double>(DNum<S>::load(plane[ylo * g.w + xhi])));
          v[2] = __dmul_rn(__dmul_rn(ly, hx),
                           static_cast<double>(DNum<S>::load(plane[yhi * g.w + xlo])));
          v[3] = __dmul_rn(__dmul_rn(ly, lx),
                           static_cast<double>(DNum<S>::load(plane[yhi * g.w + xhi])));
        }
        if (g.avg) {
          acc += v[0] + v[1] + v[2] + v[3];
        } else {
          const double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
          acc = first ? m : fmax(acc, m);
          first = false;
        }
      }
    }
    if (g.avg) {
      const int64_t cnt = gh * gw;
      acc /= static_cast<double>(cnt > 1 ? cnt : 1);
    }
    y[t] = DNum<S>::store(static_cast<typename DNum<S>::C>(acc));
  }
}

Status roiAlignCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& xd = in[0].desc;
  Geom g{};
  g.n = xd.dims[0];
  g.ch = xd.dims[1];
  g.h = xd.dims[2];
  g.w = xd.dims[3];
  g.rois = in[1].desc.dims[0];
  g.oh = k.attr<int64_t>("output_height");
  g.ow = k.attr<int64_t>("output_width");
  g.ratio = k.attr<int64_t>("sampling_ratio");
  g.scale = k.attr<double>("spatial_scale");
  const AttrMap& a = k.attrs();
  g.half = a.has("coordinate_transformation_mode")
               ? a.get<std::string>("coordinate_transformation_mode") == "half_pixel"
               : opsetOf(a) >= 16;
  g.offset = g.half ? 0.5 : 0.0;
  g.avg = k.attr<std::string>("mode") == "avg";
  const int64_t total = out[0].desc.numel();
  if (total == 0) return Status::ok();
  if (g.h == 0 || g.w == 0) return Status::invalid("RoiAlign: input 'X' has an empty image");
  return visitDevice<kFloats>(xd.dtype, "RoiAlign", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    roiAlignKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data),
        static_cast<const int64_t*>(in[2].data), static_cast<S*>(out[0].data), g, k.errorRecord());
    return launched("RoiAlign");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::RoiAlign",
                [](OpDef& d) { d.tactic(1, "cuda.direct", roiAlignCuda, linearOnly); });

}  // namespace opforge::ops
