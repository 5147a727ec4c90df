// opforge::DeformableAggregationGrad — the backward of opforge::DeformableAggregation: gradients of
// the features, the sampling locations and the weights. Spec: README.md beside this file.
#include <algorithm>

#include "../../common/dtype_dispatch.h"
#include "../deformable_aggregation/deformable_aggregation.h"

namespace opforge::contrib {

namespace {
// Same mask and corners as the forward; masked samples and out-of-level corners get no gradient.
template <typename FT, typename LT>
void daBackward(const DaSizes& z, const FT* feat, const int32_t* sp, const int32_t* st,
                const LT* loc, const LT* w, const FT* gout, FT* gfeat, LT* gloc, LT* gw,
                double (*load)(FT), FT (*store)(double)) {
  const int64_t cpg = z.channelsPerGroup();
  std::vector<double> gf(static_cast<size_t>(z.B * z.F * z.C), 0.0);
  std::vector<double> gsum(z.G);
  for (int64_t b = 0; b < z.B; ++b)
    for (int64_t a = 0; a < z.A; ++a) {
      const FT* go = gout + (b * z.A + a) * z.C;
      for (int64_t p = 0; p < z.P; ++p)
        for (int64_t cam = 0; cam < z.Ncam; ++cam) {
          const int64_t pt = ((b * z.A + a) * z.P + p) * z.Ncam + cam;
          const double u = static_cast<double>(loc[2 * pt]),
                       v = static_cast<double>(loc[2 * pt + 1]);
          LT* gwp = gw + pt * z.L * z.G;
          if (!daValid(u, v)) {
            std::fill(gwp, gwp + z.L * z.G, LT(0));
            gloc[2 * pt] = gloc[2 * pt + 1] = LT(0);
            continue;
          }
          double gx = 0, gy = 0;
          for (int64_t l = 0; l < z.L; ++l) {
            const int64_t t = cam * z.L + l;
            const int64_t H = sp[2 * t], W = sp[2 * t + 1];
            const DaCorners cr = daCorners(u, v, H, W, st[t]);
            const LT* wg = w + (pt * z.L + l) * z.G;
            std::fill(gsum.begin(), gsum.end(), 0.0);
            for (int64_t k = 0; k < z.C; ++k) {
              double val[4];
              for (int q = 0; q < 4; ++q)
                val[q] = cr.in[q] ? load(feat[(b * z.F + cr.row[q]) * z.C + k]) : 0.0;
              const double g = load(go[k]), wt = static_cast<double>(wg[k / cpg]);
              const double bil =
                  cr.w[0] * val[0] + cr.w[1] * val[1] + cr.w[2] * val[2] + cr.w[3] * val[3];
              const double dx = (1 - cr.ay) * (val[1] - val[0]) + cr.ay * (val[3] - val[2]);
              const double dy = (1 - cr.ax) * (val[2] - val[0]) + cr.ax * (val[3] - val[1]);
              gsum[k / cpg] += g * bil;
              gx += static_cast<double>(W) * g * wt * dx;
              gy += static_cast<double>(H) * g * wt * dy;
              for (int q = 0; q < 4; ++q)
                if (cr.in[q])
                  gf[static_cast<size_t>((b * z.F + cr.row[q]) * z.C + k)] += cr.w[q] * g * wt;
            }
            for (int64_t grp = 0; grp < z.G; ++grp) gwp[l * z.G + grp] = static_cast<LT>(gsum[grp]);
          }
          gloc[2 * pt] = static_cast<LT>(gx);
          gloc[2 * pt + 1] = static_cast<LT>(gy);
        }
    }
  for (size_t i = 0; i < gf.size(); ++i) gfeat[i] = store(gf[i]);
}

Status daGradReference(KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
  const DaSizes z = daSizes(in);
  const auto* sp = in[kDaSpatial].as<const int32_t>();
  const auto* st = in[kDaStart].as<const int32_t>();
  if (z.Ncam * z.L > 0 && z.B * z.A * z.P > 0)
    if (auto bad = daCheckTables(sp, st, z.Ncam, z.L, z.F))
      return Status::outOfRange("DeformableAggregationGrad: " + *bad);
  switch (in[kDaFeat].desc.dtype) {
    case DataType::kFloat32:
      daBackward<float, float>(
          z, in[kDaFeat].as<const float>(), sp, st, in[kDaLoc].as<const float>(),
          in[kDaWeights].as<const float>(), in[kDaGradOut].as<const float>(), out[0].as<float>(),
          out[1].as<float>(), out[2].as<float>(), [](float f) { return static_cast<double>(f); },
          [](double d) { return static_cast<float>(d); });
      return Status::ok();
    case DataType::kFloat64:
      daBackward<double, double>(
          z, in[kDaFeat].as<const double>(), sp, st, in[kDaLoc].as<const double>(),
          in[kDaWeights].as<const double>(), in[kDaGradOut].as<const double>(), out[0].as<double>(),
          out[1].as<double>(), out[2].as<double>(), [](double f) { return f; },
          [](double d) { return d; });
      return Status::ok();
    case DataType::kFloat16:
      daBackward<uint16_t, float>(
          z, in[kDaFeat].as<const uint16_t>(), sp, st, in[kDaLoc].as<const float>(),
          in[kDaWeights].as<const float>(), in[kDaGradOut].as<const uint16_t>(),
          out[0].as<uint16_t>(), out[1].as<float>(), out[2].as<float>(),
          [](uint16_t h) { return static_cast<double>(halfToFloat(h)); },
          [](double d) { return floatToHalf(static_cast<float>(d)); });
      return Status::ok();
    case DataType::kBFloat16:
      daBackward<uint16_t, float>(
          z, in[kDaFeat].as<const uint16_t>(), sp, st, in[kDaLoc].as<const float>(),
          in[kDaWeights].as<const float>(), in[kDaGradOut].as<const uint16_t>(),
          out[0].as<uint16_t>(), out[1].as<float>(), out[2].as<float>(),
          [](uint16_t h) { return static_cast<double>(bf16ToFloat(h)); },
          [](double d) { return floatToBf16(static_cast<float>(d)); });
      return Status::ok();
    default:
      return Status::unsupported("DeformableAggregationGrad does not support " +
                                 dtypeName(in[kDaFeat].desc.dtype) + " features");
  }
}
}  // namespace

OPFORGE_OP(deformable_aggregation_grad, "opforge::DeformableAggregationGrad")
    .doc(
        "Gradients of opforge::DeformableAggregation with respect to the features, sampling "
        "locations and weights.")
    .input("mc_ms_feat", "[B, F, C]")
    .valueInput("spatial_shape", false, "INT32 [Ncam, L, 2]")
    .valueInput("scale_start_index", false, "INT32 [Ncam, L]")
    .input("sampling_location", "[B, A, P, Ncam, 2]")
    .input("weights", "[B, A, P, Ncam, L, G]")
    .input("grad_output", "[B, A, C], the features' type: gradient of the forward output")
    .output("grad_mc_ms_feat", "[B, F, C], the features' type")
    .output("grad_sampling_location", "[B, A, P, Ncam, 2]")
    .output("grad_weights", "[B, A, P, Ncam, L, G]")
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      OPFORGE_ASSIGN_OR_RETURN(DaSymSizes s, daCheckShapes(c));
      const SymDesc g = c.input(kDaGradOut);
      const DataType ft = c.input(kDaFeat).dtype;
      if (g.dtype != ft)
        return c.error("grad_output must have the features' type " + dtypeName(ft) + ", got " +
                       dtypeName(g.dtype));
      if (g.rank() != 3)
        return c.error("grad_output must have rank 3 [B, A, C], got " + toString(g.dims));
      const DimExpr want[3] = {s.B, s.A, s.C};
      for (int d = 0; d < 3; ++d) {
        if (g.dim(d).isConst() && want[d].isConst() &&
            g.dim(d).constValue() != want[d].constValue())
          return c.error("grad_output " + toString(g.dims) +
                         " must be [B, A, C] = " + toString({s.B, s.A, s.C}));
        if (!g.dim(d).sameAs(want[d]))
          c.require(g.dim(d), DimAssertion::Op::kEq, want[d], "grad_output must be [B, A, C]");
      }
      const SymDesc loc = c.input(kDaLoc), w = c.input(kDaWeights);
      return std::vector<SymDesc>{SymDesc::make(ft, {s.B, s.F, s.C}),
                                  SymDesc::make(loc.dtype, loc.dims),
                                  SymDesc::make(w.dtype, w.dims)};
    })
    .combos("FP32|FP16|BF16, INT32, INT32, FP32, FP32, FP32|FP16|BF16, FP32|FP16|BF16, FP32, FP32")
    .combo(Combo("FP64, INT32, INT32, FP64, FP64, FP64, FP64, FP64, FP64").tactics({0}))
    .cpu(daGradReference);

}  // namespace opforge::contrib
