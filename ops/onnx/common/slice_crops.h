// slice_crops.h — what a Slice node keeps of its input, for graph passes in ops/ that match
// exported crops (roll_fusion, patch_merge): per axis, the begin, step and end, from the attribute
// form or from inputs whose values are known when the network is built.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "pass_ints.h"

namespace opforge::ops {

struct Crop {
  int64_t begin, step, end;  // clamped to [0, d]
};

// The crop a Slice makes of its input, per axis: known values and positive steps only.
inline std::optional<std::map<int, Crop>> sliceCrops(const graph::Graph& g, const graph::Node& s) {
  const auto& in = s.inputs;
  if (in.empty() || in[0] < 0) return std::nullopt;
  const graph::Value& x = g.values[in[0]];
  const int r = static_cast<int>(x.dims.size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (in.size() < 3 || in[1] < 0 || in[2] < 0) {  // the attribute form
    if (!s.attrs.has("starts") || !s.attrs.has("ends")) return std::nullopt;
    starts = s.attrs.get<std::vector<int64_t>>("starts");
    ends = s.attrs.get<std::vector<int64_t>>("ends");
    if (s.attrs.has("axes")) axes = s.attrs.get<std::vector<int64_t>>("axes");
  } else {
    starts = knownInts(g, in[1]);
    ends = knownInts(g, in[2]);
    if (in.size() > 3 && in[3] >= 0 && !(axes = knownInts(g, in[3]))) return std::nullopt;
    if (in.size() > 4 && in[4] >= 0 && !(steps = knownInts(g, in[4]))) return std::nullopt;
  }
  if (!starts || !ends || starts->size() != ends->size() ||
      (axes && axes->size() != starts->size()) || (steps && steps->size() != starts->size()))
    return std::nullopt;
  std::map<int, Crop> crops;
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
    if (a < -r || a >= r) return std::nullopt;
    if (a < 0) a += r;
    const int64_t st = steps ? (*steps)[i] : 1;
    if (st <= 0 || !x.dims[a].isConst() || crops.count(static_cast<int>(a))) return std::nullopt;
    const int64_t d = x.dims[a].constValue();
    const auto clamp = [d](int64_t v) {
      if (v < 0) v = v < -d ? 0 : v + d;
      return std::min(v, d);
    };
    crops[static_cast<int>(a)] = Crop{clamp((*starts)[i]), st, clamp((*ends)[i])};
  }
  return crops;
}

}  // namespace opforge::ops
