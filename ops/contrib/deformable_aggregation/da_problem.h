// da_problem.h — random inputs for opforge::DeformableAggregation (tests and benchmarks, host
// only).
//
// Every camera has the same levels; features are [B, F, C] with F = Ncam * sum(H * W) and the
// tables tile F camera by camera, level by level (Sparse4D's layout). A fraction `valid` of the
// sampling points lies inside (0, 1)^2; the others are outside it (including NaN and +-Inf when
// `specials`). Weights are positive and sum to one over each anchor's (p, cam, l) entries of a
// group, as the model's softmax gives.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "opforge/op.h"

namespace opforge::test {

struct DaProblem {
  int64_t B = 1, A = 4, P = 3, Ncam = 2, C = 16, G = 4;
  std::vector<std::pair<int32_t, int32_t>> levels = {{4, 6}, {2, 3}};  // (H, W) of each level
  DataType feat_type = DataType::kFloat32;
  DataType loc_type = DataType::kFloat32;  // FP64 with FP64 features
  double valid = 0.7;
  bool specials = true;

  int64_t L() const { return static_cast<int64_t>(levels.size()); }
  int64_t rowsPerCam() const {
    int64_t r = 0;
    for (auto [h, w] : levels) r += int64_t(h) * w;
    return r;
  }
  int64_t F() const { return Ncam * rowsPerCam(); }
};

inline TensorValue daTensor(DataType t, std::vector<int64_t> dims) {
  TensorValue v;
  v.desc = TensorDesc{t, std::move(dims)};
  v.data.assign(v.desc.bytes(), 0);
  return v;
}

// {mc_ms_feat, spatial_shape, scale_start_index, sampling_location, weights}
inline std::vector<TensorValue> makeDaInputs(const DaProblem& p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u01(0.0, 1.0), feat(-1.0, 1.0);
  const int64_t L = p.L();
  TensorValue f = daTensor(p.feat_type, {p.B, p.F(), p.C});
  for (int64_t i = 0; i < f.desc.numel(); ++i)
    storeFromDouble(f.data.data(), p.feat_type, i, feat(rng));
  TensorValue sp = daTensor(DataType::kInt32, {p.Ncam, L, 2});
  TensorValue st = daTensor(DataType::kInt32, {p.Ncam, L});
  auto* hw = reinterpret_cast<int32_t*>(sp.data.data());
  auto* start = reinterpret_cast<int32_t*>(st.data.data());
  int64_t row = 0;
  for (int64_t c = 0; c < p.Ncam; ++c)
    for (int64_t l = 0; l < L; ++l) {
      hw[2 * (c * L + l)] = p.levels[l].first;
      hw[2 * (c * L + l) + 1] = p.levels[l].second;
      start[c * L + l] = static_cast<int32_t>(row);
      row += int64_t(p.levels[l].first) * p.levels[l].second;
    }
  TensorValue loc = daTensor(p.loc_type, {p.B, p.A, p.P, p.Ncam, 2});
  const double outside[] = {0.0, 1.0, -0.1, 1.1, -3.0, 2.5, NAN, INFINITY, -INFINITY};
  const int n_outside = p.specials ? 9 : 6;
  for (int64_t i = 0; i < loc.desc.numel() / 2; ++i) {
    double u, v;
    if (u01(rng) < p.valid) {
      // Kept 1e-3 pixel away from every level's pixel-centre grid: there the bilinear sample is
      // continuous but its derivative jumps, and the fp32 kernels and the float64 reference could
      // round to different sides (the gradient tests would then compare two one-sided derivatives).
      auto on_grid = [&](double c, bool is_u) {
        for (auto [h, w] : p.levels) {
          const double x = c * (is_u ? w : h) - 0.5;
          if (std::fabs(x - std::round(x)) < 1e-3) return true;
        }
        return false;
      };
      do u = 0.001 + 0.998 * u01(rng);
      while (on_grid(u, true));
      do v = 0.001 + 0.998 * u01(rng);
      while (on_grid(v, false));
    } else {  // one coordinate outside the open unit interval
      const double bad = outside[rng() % n_outside];
      const bool first = rng() % 2;
      u = first ? bad : u01(rng);
      v = first ? u01(rng) : bad;
    }
    storeFromDouble(loc.data.data(), p.loc_type, 2 * i, u);
    storeFromDouble(loc.data.data(), p.loc_type, 2 * i + 1, v);
  }
  TensorValue w = daTensor(p.loc_type, {p.B, p.A, p.P, p.Ncam, L, p.G});
  const int64_t per_anchor = p.P * p.Ncam * L;
  for (int64_t ba = 0; ba < p.B * p.A; ++ba)
    for (int64_t g = 0; g < p.G; ++g) {
      std::vector<double> e(per_anchor);
      double sum = 0;
      for (auto& x : e) sum += (x = std::exp(2.0 * feat(rng)));
      for (int64_t j = 0; j < per_anchor; ++j)
        storeFromDouble(w.data.data(), p.loc_type, (ba * per_anchor + j) * p.G + g, e[j] / sum);
    }
  return {f, sp, st, loc, w};
}

}  // namespace opforge::test
