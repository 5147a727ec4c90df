// tensorscatter.h — what the CPU reference and the CUDA tactic of ai.onnx::TensorScatter share:
// the geometry of a write (the cache seen as [outer, max_sequence_length, inner] rows, the update
// as [outer, sequence_length, inner]), the check of one write index and its error message.
#pragma once

#include <string>

#include "../common/util.h"

namespace opforge::ops {

struct TensorScatterGeom {
  int axis = 0;           // the sequence axis, in [1, rank)
  int64_t batch = 0;      // past_cache's dim 0
  int64_t per_batch = 1;  // product of the dims between the batch axis and the sequence axis
  int64_t outer = 0;      // batch * per_batch: the rows' prefixes
  int64_t max_seq = 0;    // past_cache's length on the axis
  int64_t seq = 0;        // update's length on the axis
  int64_t inner = 1;      // elements after the axis (one row)
  bool circular = false;
};

inline Result<TensorScatterGeom> tensorScatterGeom(const AttrMap& a, const TensorDesc& cache,
                                                   const TensorDesc& update) {
  const int r = cache.rank();
  const int64_t axis = a.get<int64_t>("axis");
  if (r < 2 || update.rank() != r || axis < -r || axis >= r || axis == 0 || axis == -r)
    return Status::invalid("TensorScatter: attribute 'axis' " + std::to_string(axis) +
                           " or the ranks of past_cache " + dimsToString(cache.dims) +
                           " and update " + dimsToString(update.dims) + " do not fit");
  TensorScatterGeom g;
  g.axis = wrapAxis(axis, r);
  for (int d = 0; d < r; ++d)
    if (d != g.axis && update.dims[d] != cache.dims[d])
      return Status::invalid("TensorScatter: update " + dimsToString(update.dims) +
                             " differs from past_cache " + dimsToString(cache.dims) + " on axis " +
                             std::to_string(d));
  g.batch = cache.dims[0];
  g.per_batch = prodOf(cache.dims, 1, g.axis);
  g.outer = g.batch * g.per_batch;
  g.max_seq = cache.dims[g.axis];
  g.seq = update.dims[g.axis];
  g.inner = prodOf(cache.dims, g.axis + 1, r);
  g.circular = a.get<std::string>("mode") == "circular";
  if (g.seq > g.max_seq)
    return Status::invalid("TensorScatter: update's sequence length " + std::to_string(g.seq) +
                           " exceeds past_cache's " + std::to_string(g.max_seq) + " on axis " +
                           std::to_string(g.axis));
  return g;
}

// Whether write index w is valid: never negative; in linear mode the `seq` rows from w must fit.
inline bool tensorScatterIndexOk(int64_t w, const TensorScatterGeom& g) {
  return w >= 0 && (g.circular || w <= g.max_seq - g.seq);
}

// The run-time error of a bad write index (the CUDA tactic reports the same values through the
// device error record, kind kDeviceErrorRegion).
inline Status tensorScatterIndexError(int64_t w, int64_t b, const TensorScatterGeom& g) {
  const std::string where = "input 'write_indices' holds " + std::to_string(w) + " at position " +
                            std::to_string(b) + ": ";
  if (w < 0)
    return Status::outOfRange(where + "a write index must not be negative (mode '" +
                              std::string(g.circular ? "circular" : "linear") + "')");
  return Status::outOfRange(
      where + "the update's " + std::to_string(g.seq) + " rows from " + std::to_string(w) +
      " reach past past_cache's " + std::to_string(g.max_seq) + " entries along axis " +
      std::to_string(g.axis) + " (mode 'linear' needs write index + " + std::to_string(g.seq) +
      " <= " + std::to_string(g.max_seq) + "; mode 'circular' wraps around)");
}

}  // namespace opforge::ops
