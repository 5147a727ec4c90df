// deformable_aggregation.h — shared by opforge::DeformableAggregation and its backward
// (opforge::DeformableAggregationGrad): the symbolic shape checks, the concrete sizes, the table
// validation and the float64 sampling math of the CPU references.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opforge/op.h"

namespace opforge::contrib {

// Input positions shared by the forward and backward ops.
enum DaInput : int {
  kDaFeat = 0,
  kDaSpatial = 1,
  kDaStart = 2,
  kDaLoc = 3,
  kDaWeights = 4,
  kDaGradOut = 5
};

// Concrete sizes: mc_ms_feat [B, F, C], spatial_shape [Ncam, L, 2], scale_start_index [Ncam, L],
// sampling_location [B, A, P, Ncam, 2], weights [B, A, P, Ncam, L, G].
struct DaSizes {
  int64_t B = 0, F = 0, C = 0, Ncam = 0, L = 0, A = 0, P = 0, G = 0;
  int64_t channelsPerGroup() const { return G > 0 ? C / G : 0; }
};

inline DaSizes daSizes(std::span<const TensorDesc> in) {
  DaSizes s;
  s.B = in[kDaFeat].dims[0];
  s.F = in[kDaFeat].dims[1];
  s.C = in[kDaFeat].dims[2];
  s.Ncam = in[kDaSpatial].dims[0];
  s.L = in[kDaSpatial].dims[1];
  s.A = in[kDaLoc].dims[1];
  s.P = in[kDaLoc].dims[2];
  s.G = in[kDaWeights].dims[5];
  return s;
}
inline DaSizes daSizes(std::span<const Tensor> in) {
  std::vector<TensorDesc> d;
  for (const auto& t : in) d.push_back(t.desc);
  return daSizes(std::span<const TensorDesc>(d));
}

// The shape rule of both ops: ranks, dtypes and every size relation; constant tables are checked
// against F. Returns the sizes as expressions (B, F, C, Ncam, L, A, P, G).
struct DaSymSizes {
  DimExpr B, F, C, Ncam, L, A, P, G;
};
Result<DaSymSizes> daCheckShapes(ShapeContext& c);

// The first (camera, level) whose region [start, start + H*W) is not inside [0, F), or whose H or
// W is negative; nullopt when every one is inside. Message names the values.
std::optional<std::string> daCheckTables(const int32_t* spatial, const int32_t* start, int64_t ncam,
                                         int64_t levels, int64_t F);
// The message for entry (cam, level) of the tables.
std::string daTableEntryError(int64_t cam, int64_t level, int64_t H, int64_t W, int64_t start,
                              int64_t F);

// Bilinear sample of level (H, W) at normalised (u, v): the four corners (y0,x0), (y0,x0+1),
// (y0+1,x0), (y0+1,x0+1) with their weights; a corner outside the level has in[k] = false.
struct DaCorners {
  int64_t row[4];
  double w[4];
  bool in[4];
  double ax, ay;
};
inline bool daValid(double u, double v) {
  return u > 0 && u < 1 && v > 0 && v < 1;
}  // false for NaN
inline DaCorners daCorners(double u, double v, int64_t H, int64_t W, int64_t start) {
  DaCorners c;
  const double x = u * static_cast<double>(W) - 0.5, y = v * static_cast<double>(H) - 0.5;
  const double fx = std::floor(x), fy = std::floor(y);
  const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  c.ax = x - fx;
  c.ay = y - fy;
  const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
  const double wy[4] = {1 - c.ay, 1 - c.ay, c.ay, c.ay}, wx[4] = {1 - c.ax, c.ax, 1 - c.ax, c.ax};
  for (int k = 0; k < 4; ++k) {
    c.in[k] = ys[k] >= 0 && ys[k] < H && xs[k] >= 0 && xs[k] < W;
    c.row[k] = c.in[k] ? start + ys[k] * W + xs[k] : 0;
    c.w[k] = wy[k] * wx[k];
  }
  return c;
}

}  // namespace opforge::contrib
