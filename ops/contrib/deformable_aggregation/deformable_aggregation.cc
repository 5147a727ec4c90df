// opforge::DeformableAggregation — Sparse4Dv3's multi-camera, multi-scale deformable feature
// aggregation. Spec: README.md beside this file; the function:
// ../shared/reference/deformable-aggregation.md.
#include "deformable_aggregation.h"

#include "../../common/dtype_dispatch.h"

namespace opforge::contrib {

namespace {
// Requires a == b (an error now when both are known and differ, an assertion otherwise).
Status sameDim(ShapeContext& c, const DimExpr& a, const DimExpr& b, const std::string& what) {
  if (a.isConst() && b.isConst()) {
    if (a.constValue() != b.constValue())
      return c.error(what + " must agree: " + std::to_string(a.constValue()) + " vs " +
                     std::to_string(b.constValue()));
    return Status::ok();
  }
  if (!a.sameAs(b)) c.require(a, DimAssertion::Op::kEq, b, what + " must agree");
  return Status::ok();
}

Status rankIs(ShapeContext& c, int i, int rank, const char* name, const char* layout) {
  const SymDesc d = c.input(i);
  if (d.rank() != rank)
    return c.error(std::string("input '") + name + "' must have rank " + std::to_string(rank) +
                   " " + layout + ", got " + toString(d.dims));
  return Status::ok();
}
}  // namespace

Result<DaSymSizes> daCheckShapes(ShapeContext& c) {
  OPFORGE_RETURN_IF_ERROR(rankIs(c, kDaFeat, 3, "mc_ms_feat", "[B, F, C]"));
  OPFORGE_RETURN_IF_ERROR(rankIs(c, kDaSpatial, 3, "spatial_shape", "[Ncam, L, 2]"));
  OPFORGE_RETURN_IF_ERROR(rankIs(c, kDaStart, 2, "scale_start_index", "[Ncam, L]"));
  OPFORGE_RETURN_IF_ERROR(rankIs(c, kDaLoc, 5, "sampling_location", "[B, A, P, Ncam, 2]"));
  OPFORGE_RETURN_IF_ERROR(rankIs(c, kDaWeights, 6, "weights", "[B, A, P, Ncam, L, G]"));
  const SymDesc feat = c.input(kDaFeat), sp = c.input(kDaSpatial), st = c.input(kDaStart),
                loc = c.input(kDaLoc), w = c.input(kDaWeights);
  if (sp.dtype != DataType::kInt32 || st.dtype != DataType::kInt32)
    return c.error("spatial_shape and scale_start_index must be INT32, got " + dtypeName(sp.dtype) +
                   " and " + dtypeName(st.dtype));
  const bool f64 = feat.dtype == DataType::kFloat64;
  const DataType want = f64 ? DataType::kFloat64 : DataType::kFloat32;
  if (loc.dtype != want || w.dtype != want)
    return c.error("sampling_location and weights must be " + dtypeName(want) + " with " +
                   dtypeName(feat.dtype) +
                   " features (locations and weights stay fp32 for FP16/BF16 features), got " +
                   dtypeName(loc.dtype) + " and " + dtypeName(w.dtype));
  DaSymSizes s{feat.dim(0), feat.dim(1), feat.dim(2), sp.dim(0),
               sp.dim(1),   loc.dim(1),  loc.dim(2),  w.dim(5)};
  OPFORGE_RETURN_IF_ERROR(sameDim(c, sp.dim(2), 2, "spatial_shape's last dimension and 2"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, loc.dim(4), 2, "sampling_location's last dimension and 2"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, loc.dim(0), s.B, "B of sampling_location and mc_ms_feat"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, w.dim(0), s.B, "B of weights and mc_ms_feat"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, w.dim(1), s.A, "A of weights and sampling_location"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, w.dim(2), s.P, "P of weights and sampling_location"));
  OPFORGE_RETURN_IF_ERROR(
      sameDim(c, st.dim(0), s.Ncam, "Ncam of scale_start_index and spatial_shape"));
  OPFORGE_RETURN_IF_ERROR(
      sameDim(c, loc.dim(3), s.Ncam, "Ncam of sampling_location and spatial_shape"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, w.dim(3), s.Ncam, "Ncam of weights and spatial_shape"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, st.dim(1), s.L, "L of scale_start_index and spatial_shape"));
  OPFORGE_RETURN_IF_ERROR(sameDim(c, w.dim(4), s.L, "L of weights and spatial_shape"));
  if (s.G.isConst() && s.G.constValue() < 1)
    return c.error("weights' group count G (last dimension) must be >= 1, got 0");
  if (s.C.isConst() && s.G.isConst()) {
    if (s.C.constValue() % s.G.constValue() != 0)
      return c.error("the channel count C = " + std::to_string(s.C.constValue()) +
                     " of mc_ms_feat is not divisible by the group count G = " +
                     std::to_string(s.G.constValue()) + " of weights");
  } else {
    c.require(
        floorDiv(s.C, s.G) * s.G, DimAssertion::Op::kEq, s.C,
        "the channel count C of mc_ms_feat must be divisible by the group count G of weights");
  }
  // Constant tables (the usual case: initializers): the levels must tile the F rows exactly.
  const TensorValue* spc = c.constant(kDaSpatial);
  if (spc && spc->desc.dtype == DataType::kInt32 && spc->desc.rank() == 3 &&
      spc->desc.dims[2] == 2) {
    const auto* hw = reinterpret_cast<const int32_t*>(spc->data.data());
    const int64_t n = spc->desc.dims[0] * spc->desc.dims[1];
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (hw[2 * i] < 0 || hw[2 * i + 1] < 0)
        return c.error("spatial_shape[" + std::to_string(i / spc->desc.dims[1]) + "][" +
                       std::to_string(i % spc->desc.dims[1]) + "] = (" + std::to_string(hw[2 * i]) +
                       ", " + std::to_string(hw[2 * i + 1]) + ") is negative");
      total += static_cast<int64_t>(hw[2 * i]) * hw[2 * i + 1];
    }
    if (s.F.isConst() && total != s.F.constValue())
      return c.error("the levels of spatial_shape cover " + std::to_string(total) +
                     " rows (sum of H*W) but mc_ms_feat has F = " +
                     std::to_string(s.F.constValue()) + " rows");
    if (!s.F.isConst())
      c.require(DimExpr(total), DimAssertion::Op::kEq, s.F,
                "the levels of spatial_shape (sum of H*W = " + std::to_string(total) +
                    ") must cover F, the rows of mc_ms_feat");
    const TensorValue* stc = c.constant(kDaStart);
    if (stc && stc->desc.dtype == DataType::kInt32 && stc->desc.numel() == n && s.F.isConst()) {
      if (auto bad = daCheckTables(hw, reinterpret_cast<const int32_t*>(stc->data.data()),
                                   spc->desc.dims[0], spc->desc.dims[1], s.F.constValue()))
        return c.error(*bad);
    }
  }
  return s;
}

std::string daTableEntryError(int64_t cam, int64_t level, int64_t H, int64_t W, int64_t s,
                              int64_t F) {
  const std::string at = "[" + std::to_string(cam) + "][" + std::to_string(level) + "]";
  if (H < 0 || W < 0)
    return "spatial_shape" + at + " = (" + std::to_string(H) + ", " + std::to_string(W) +
           ") is negative";
  return "scale_start_index" + at + " = " + std::to_string(s) + " with spatial_shape" + at +
         " = (" + std::to_string(H) + ", " + std::to_string(W) + ") addresses rows [" +
         std::to_string(s) + ", " + std::to_string(s + H * W) + ") outside mc_ms_feat's " +
         std::to_string(F) + " rows";
}

std::optional<std::string> daCheckTables(const int32_t* spatial, const int32_t* start, int64_t ncam,
                                         int64_t levels, int64_t F) {
  for (int64_t i = 0; i < ncam * levels; ++i) {
    const int64_t H = spatial[2 * i], W = spatial[2 * i + 1], s = start[i];
    if (H < 0 || W < 0 || s < 0 || s + H * W > F)
      return daTableEntryError(i / levels, i % levels, H, W, s, F);
  }
  return std::nullopt;
}

namespace {
// out[b,a,k] = sum over p, cam, l of valid * weights[.., k / (C/G)] * bilinear sample, in float64.
template <typename FT, typename LT>
void daForward(const DaSizes& z, const FT* feat, const int32_t* sp, const int32_t* st,
               const LT* loc, const LT* w, FT* out, double (*load)(FT), FT (*store)(double)) {
  const int64_t cpg = z.channelsPerGroup();
  std::vector<double> acc(z.C);
  for (int64_t b = 0; b < z.B; ++b)
    for (int64_t a = 0; a < z.A; ++a) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t p = 0; p < z.P; ++p)
        for (int64_t cam = 0; cam < z.Ncam; ++cam) {
          const int64_t pt = ((b * z.A + a) * z.P + p) * z.Ncam + cam;
          const double u = static_cast<double>(loc[2 * pt]),
                       v = static_cast<double>(loc[2 * pt + 1]);
          if (!daValid(u, v)) continue;
          for (int64_t l = 0; l < z.L; ++l) {
            const int64_t t = cam * z.L + l;
            const DaCorners cr = daCorners(u, v, sp[2 * t], sp[2 * t + 1], st[t]);
            const LT* wg = w + (pt * z.L + l) * z.G;
            for (int q = 0; q < 4; ++q) {
              if (!cr.in[q]) continue;
              const FT* row = feat + (b * z.F + cr.row[q]) * z.C;
              for (int64_t k = 0; k < z.C; ++k)
                acc[k] += static_cast<double>(wg[k / cpg]) * cr.w[q] * load(row[k]);
            }
          }
        }
      for (int64_t k = 0; k < z.C; ++k) out[(b * z.A + a) * z.C + k] = store(acc[k]);
    }
}

Status daReference(KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
  const DaSizes z = daSizes(in);
  if (out[0].numel() == 0) return Status::ok();
  const auto* sp = in[kDaSpatial].as<const int32_t>();
  const auto* st = in[kDaStart].as<const int32_t>();
  if (z.Ncam * z.L > 0)
    if (auto bad = daCheckTables(sp, st, z.Ncam, z.L, z.F))
      return Status::outOfRange("DeformableAggregation: " + *bad);
  switch (in[kDaFeat].desc.dtype) {
    case DataType::kFloat32:
      daForward<float, float>(
          z, in[kDaFeat].as<const float>(), sp, st, in[kDaLoc].as<const float>(),
          in[kDaWeights].as<const float>(), out[0].as<float>(),
          [](float f) { return static_cast<double>(f); },
          [](double d) { return static_cast<float>(d); });
      return Status::ok();
    case DataType::kFloat64:
      daForward<double, double>(
          z, in[kDaFeat].as<const double>(), sp, st, in[kDaLoc].as<const double>(),
          in[kDaWeights].as<const double>(), out[0].as<double>(), [](double f) { return f; },
          [](double d) { return d; });
      return Status::ok();
    case DataType::kFloat16:
      daForward<uint16_t, float>(
          z, in[kDaFeat].as<const uint16_t>(), sp, st, in[kDaLoc].as<const float>(),
          in[kDaWeights].as<const float>(), out[0].as<uint16_t>(),
          [](uint16_t h) { return static_cast<double>(halfToFloat(h)); },
          [](double d) { return floatToHalf(static_cast<float>(d)); });
      return Status::ok();
    case DataType::kBFloat16:
      daForward<uint16_t, float>(
          z, in[kDaFeat].as<const uint16_t>(), sp, st, in[kDaLoc].as<const float>(),
          in[kDaWeights].as<const float>(), out[0].as<uint16_t>(),
          [](uint16_t h) { return static_cast<double>(bf16ToFloat(h)); },
          [](double d) { return floatToBf16(static_cast<float>(d)); });
      return Status::ok();
    default:
      return Status::unsupported("DeformableAggregation does not support " +
                                 dtypeName(in[kDaFeat].desc.dtype) + " features");
  }
}
}  // namespace

OPFORGE_OP(deformable_aggregation, "opforge::DeformableAggregation")
    .doc(
        "Sparse4Dv3 deformable feature aggregation: multi-camera, multi-scale bilinear sampling "
        "summed with per-group weights.")
    .input("mc_ms_feat", "[B, F, C] features of every camera and level, channels last")
    .valueInput("spatial_shape", false, "INT32 [Ncam, L, 2]: (H, W) of each level of each camera")
    .valueInput("scale_start_index", false,
                "INT32 [Ncam, L]: first row of each (camera, level) in F")
    .input("sampling_location", "[B, A, P, Ncam, 2] normalised (u, v) = (x / W_img, y / H_img)")
    .input("weights", "[B, A, P, Ncam, L, G] per-group weights")
    .output("output", "[B, A, C], the features' type")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      OPFORGE_ASSIGN_OR_RETURN(DaSymSizes s, daCheckShapes(c));
      return SymDesc::make(c.input(kDaFeat).dtype, {s.B, s.A, s.C});
    })
    .combos("FP32|FP16|BF16, INT32, INT32, FP32, FP32, FP32|FP16|BF16")
    .combo(Combo("FP64, INT32, INT32, FP64, FP64, FP64").tactics({0}))
    .cpu(daReference)
    .alias("custom::DeformableAttentionAggrPlugin")
    .alias("nv::MSDA")
    .alias("SparseDrive::DeformableAggregation")
    .backward("opforge::DeformableAggregationGrad");

}  // namespace opforge::contrib
