// ONNX ConvTranspose: the gradient of Conv with respect to its input — every input element adds
// x * W[c, m, tap] at output position i * stride - pad_begin + tap * dilation. Output size per
// axis: stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pad_begin - pad_end, or
// `output_shape` / SAME_* (in * stride), the padding then derived from the total (the odd unit at
// the end for SAME_UPPER, at the beginning otherwise). FP32 and FP64: per image and group, columns
// [mg * taps, positions] = W_g^T x X_g (sgemm / dgemm) scattered into Y (col2im); other types, and
// OPFORGE_CPU_NAIVE=1, the plain loop with double accumulation.
#include <algorithm>

#include "../common/combos.h"
#include "../common/gemm.h"
#include "../common/pool.h"
#include "convtranspose_geom.h"

namespace opforge::ops {
namespace {

// Where the taps of an input position land in the output: flat indices, or -1 outside.
class Scatter {
 public:
  Scatter(const std::vector<int64_t>& isz, const std::vector<int64_t>& osz,
          const std::vector<int64_t>& kernel, const TGeom& g)
      : nd_(static_cast<int>(isz.size())), isz_(isz), osz_(osz), g_(g), base_(isz.size()) {
    taps_ = prodOf(kernel, 0, nd_);
    reach_.resize(static_cast<size_t>(taps_ * nd_));
    for (int64_t t = 0; t < taps_; ++t)
      for (int64_t rem = t, a = nd_ - 1; a >= 0; --a)
        reach_[t * nd_ + a] = (rem % kernel[a]) * g.d[a], rem /= kernel[a];
  }
  int64_t taps() const { return taps_; }
  int64_t inPositions() const { return prodOf(isz_, 0, nd_); }
  int64_t outPositions() const { return prodOf(osz_, 0, nd_); }
  // The output index of every tap of input position i, into `to` (taps() entries).
  void land(int64_t i, std::vector<int64_t>& to) {
    for (int64_t rem = i, a = nd_ - 1; a >= 0; --a)
      base_[a] = (rem % isz_[a]) * g_.s[a] - g_.pb[a], rem /= isz_[a];
    for (int64_t t = 0; t < taps_; ++t) {
      int64_t flat = 0;
      bool inside = true;
      for (int a = 0; a < nd_ && inside; ++a) {
        const int64_t q = base_[a] + reach_[t * nd_ + a];
        inside = q >= 0 && q < osz_[a];
        flat = flat * osz_[a] + q;
      }
      to[t] = inside ? flat : -1;
    }
  }

 private:
  int nd_;
  const std::vector<int64_t>&isz_, &osz_;
  const TGeom& g_;
  std::vector<int64_t> base_, reach_;  // reach_[t * nd + a]: tap t's offset along axis a
  int64_t taps_ = 1;
};

// FP32 / FP64 (T): blocks of input positions, columns = W_g^T [mg * taps, cg] x X_g [cg, block],
// each column entry added at its output position.
template <typename T>
void convTransposeFast(Scatter& sc, const Tensor& x, const Tensor& wt, const Tensor* b,
                       const Tensor& y, int64_t grp) {
  const int64_t n = x.desc.dims[0], c = x.desc.dims[1], m = y.desc.dims[1];
  const int64_t cg = c / grp, mg = m / grp, taps = sc.taps(), ip = sc.inPositions(),
                op = sc.outPositions();
  const int64_t rows = mg * taps;
  const int64_t block =
      std::max<int64_t>(1, std::min<int64_t>(ip, (int64_t{1} << 22) / std::max<int64_t>(rows, 1)));
  std::vector<T> cols(static_cast<size_t>(rows * block));
  std::vector<int64_t> where(static_cast<size_t>(taps));
  const T* px = x.as<T>();
  const T* pw = wt.as<T>();
  T* py = y.as<T>();
  for (int64_t bn = 0; bn < n; ++bn) {
    for (int64_t mo = 0; mo < m; ++mo)
      std::fill(py + (bn * m + mo) * op, py + (bn * m + mo + 1) * op, b ? b->as<T>()[mo] : T(0));
    if (rows == 0 || cg == 0) continue;  // an empty kernel or no channels: the bias alone
    for (int64_t gi = 0; gi < grp; ++gi) {
      const T* xg = px + (bn * c + gi * cg) * ip;
      const T* wg = pw + gi * cg * rows;  // [cg, mg * taps]
      T* yg = py + (bn * m + gi * mg) * op;
      for (int64_t i0 = 0; i0 < ip; i0 += block) {
        const int64_t len = std::min(block, ip - i0);
        if constexpr (std::is_same_v<T, float>)
          sgemm(true, false, rows, len, cg, 1.f, wg, rows, xg + i0, ip, 0.f, cols.data(), len);
        else
          dgemm(true, false, rows, len, cg, 1.0, wg, rows, xg + i0, ip, 0.0, cols.data(), len);
        for (int64_t i = 0; i < len; ++i) {
          sc.land(i0 + i, where);
          for (int64_t ml = 0; ml < mg; ++ml)
            for (int64_t t = 0; t < taps; ++t)
              if (where[t] >= 0) yg[ml * op + where[t]] += cols[(ml * taps + t) * len + i];
        }
      }
    }
  }
}

}  // namespace
OPFORGE_OP(ConvTranspose, "ai.onnx::ConvTranspose")
    .kind("conv")
    .doc("N-D grouped transposed convolution.")
    .combos(comboTypes(kFloats))
    .input("X", "(N, C, D1, ...)")
    .input("W", "(C, M / group, k1, ...)")
    .optionalInput("B", "(M)")
    .output("Y")
    .with(windowAttrs)
    .optionalAttr<std::vector<int64_t>>("output_padding")
    .optionalAttr<std::vector<int64_t>>("output_shape")
    .attr<int64_t>("group", int64_t{1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), w = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (w.dtype != x.dtype)
        return c.error("input 'W' has type " + dtypeName(w.dtype) + "; X has " +
                       dtypeName(x.dtype));
      if (x.rank() < 3 || w.rank() != x.rank())
        return c.error("X must have rank >= 3 and W the same rank, got " + toString(x.dims) +
                       " and " + toString(w.dims));
      const int nd = x.rank() - 2;
      const int64_t group = c.attr<int64_t>("group");
      if (group < 1) return c.error("attribute 'group' must be >= 1");
      std::vector<int64_t> kernel;
      for (int i = 0; i < nd; ++i) {
        if (!w.dim(2 + i).isConst()) return c.error("the kernel size of W must be static");
        kernel.push_back(w.dim(2 + i).constValue());
      }
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, x.dim(1), w.dim(0), "the channels of X must equal dim 0 of W"));
      auto g = transposeGeom(c.attrs(), nd, kernel);
      if (!g) return c.error(g.status().message());
      const std::string auto_pad = c.attr<std::string>("auto_pad");
      std::vector<DimExpr> dims{x.dim(0), w.dim(1) * group};
      for (int i = 0; i < nd; ++i) {
        const DimExpr in = x.dim(2 + i);
        if (g->explicit_out) {
          dims.push_back(g->out[i]);
        } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
          dims.push_back(in * g->s[i]);
        } else {
          dims.push_back((in - 1) * g->s[i] +
                         (g->op_pad[i] + (g->k[i] - 1) * g->d[i] + 1 - g->pb[i] - g->pe[i]));
        }
      }
      if (c.hasInput(2)) {
        SymDesc b = c.input(2);
        if (b.dtype != x.dtype || b.rank() != 1)
          return c.error("input 'B' must be 1-D [M] of X's type");
        OPFORGE_RETURN_IF_ERROR(requireEq(c, b.dim(0), dims[1], "input 'B' must have M elements"));
      }
      return SymDesc::make(x.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &wt = in[1], &y = out[0];
      const int nd = x.desc.rank() - 2;
      std::vector<int64_t> kernel(wt.desc.dims.begin() + 2, wt.desc.dims.end());
      OPFORGE_ASSIGN_OR_RETURN(TGeom g, transposeGeom(k.attrs(), nd, kernel));
      const std::string auto_pad = k.attr<std::string>("auto_pad");
      std::vector<int64_t> isz(x.desc.dims.begin() + 2, x.desc.dims.end()), osz(nd);
      for (int i = 0; i < nd; ++i) osz[i] = transposeOut(g, auto_pad, i, isz[i]);
      const int64_t grp = k.attr<int64_t>("group"), n = x.desc.dims[0], c = x.desc.dims[1],
                    m = y.desc.dims[1];
      if (y.numel() == 0) return Status::ok();
      const Tensor* bias = hasIn(in, 2) ? &in[2] : nullptr;
      Scatter sc(isz, osz, kernel, g);
      if (x.desc.dtype == DataType::kFloat32 && !naiveKernels()) {
        convTransposeFast<float>(sc, x, wt, bias, y, grp);
        return Status::ok();
      }
      if (x.desc.dtype == DataType::kFloat64 && !naiveKernels()) {
        convTransposeFast<double>(sc, x, wt, bias, y, grp);
        return Status::ok();
      }
      const int64_t cg = c / grp, mg = m / grp, ip = prodOf(isz, 0, nd), op = prodOf(osz, 0, nd),
                    taps = prodOf(kernel, 0, nd);
      return visitTypes<kFloats>(x.desc.dtype, "ConvTranspose", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        const auto* pw = ptrOf<N>(wt);
        auto* py = mutPtr<N>(y);
        std::vector<double> acc(static_cast<size_t>(op));
        std::vector<int64_t> ii(nd), jj(nd);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t mo = 0; mo < m; ++mo) {
            const int64_t gi = mo / mg, ml = mo % mg;
            std::fill(acc.begin(), acc.end(),
                      hasIn(in, 2) ? static_cast<double>(N::load(ptrOf<N>(in[2])[mo])) : 0.0);
            for (int64_t cl = 0; cl < cg; ++cl) {
              const int64_t ci = gi * cg + cl;
              const auto* xp = px + (b * c + ci) * ip;
              const auto* wp = pw + (ci * mg + ml) * taps;
              for (int64_t i = 0; i < ip; ++i) {
                for (int64_t rem = i, a = nd - 1; a >= 0; --a) ii[a] = rem % isz[a], rem /= isz[a];
                const double xv = N::load(xp[i]);
                for (int64_t t = 0; t < taps; ++t) {
                  int64_t flat = 0;
                  bool inside = true;
                  for (int64_t rem = t, a = nd - 1; a >= 0; --a)
                    jj[a] = rem % kernel[a], rem /= kernel[a];
                  for (int a = 0; a < nd && inside; ++a) {
                    const int64_t q = ii[a] * g.s[a] - g.pb[a] + jj[a] * g.d[a];
                    inside = q >= 0 && q < osz[a];
                    flat = flat * osz[a] + q;
                  }
                  if (inside) acc[flat] += xv * static_cast<double>(N::load(wp[t]));
                }
              }
            }
            for (int64_t o = 0; o < op; ++o)
              py[(b * m + mo) * op + o] = N::store(static_cast<C>(acc[o]));
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
