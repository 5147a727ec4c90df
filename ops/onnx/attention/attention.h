// attention.h — the geometry of ONNX Attention (attention.cc) shared by its CPU reference and its
// CUDA tactic (attention.cu): where element (b, h, s, c) of each tensor lives, and which keys a
// query may attend (causal frontier, sliding window, padded keys).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "opforge/epilogue.h"

namespace opforge::ops {

struct OnnxAttn {
  int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, P = 0, T = 0, d = 0, dv = 0;
  bool in3d = false;  // Q, K, V and Y as [B, S, heads * size]
  bool causal = false;
  int64_t left = -1, right = -1;  // sliding window bounds, -1: unbounded
  bool has_nonpad = false;
  bool has_mask = false, mask_bool = false;
  int64_t mask_len = 0;          // the mask's last axis (keys past it are masked)
  int64_t ms[4] = {0, 0, 0, 0};  // mask strides for (b, h, i, j), 0 on broadcast axes
  double scale_sqrt = 1;         // sqrt(scale), rounded to Q's type (Q and K are both scaled)
  double softcap = 0;
  int mode = 0;  // qk_matmul_output_mode

  OPFORGE_HOST_DEVICE int64_t group() const { return Hq / Hkv; }
  OPFORGE_HOST_DEVICE int64_t qAt(int64_t b, int64_t h, int64_t i, int64_t c) const {
    return in3d ? (b * Sq + i) * Hq * d + h * d + c : ((b * Hq + h) * Sq + i) * d + c;
  }
  // New keys / values (t < Skv), of K and V as given.
  OPFORGE_HOST_DEVICE int64_t kAt(int64_t b, int64_t h, int64_t t, int64_t c, int64_t w) const {
    return in3d ? (b * Skv + t) * Hkv * w + h * w + c : ((b * Hkv + h) * Skv + t) * w + c;
  }
  OPFORGE_HOST_DEVICE int64_t pastAt(int64_t b, int64_t h, int64_t t, int64_t c, int64_t w) const {
    return ((b * Hkv + h) * P + t) * w + c;
  }
  OPFORGE_HOST_DEVICE int64_t presentAt(int64_t b, int64_t h, int64_t t, int64_t c,
                                        int64_t w) const {
    return ((b * Hkv + h) * T + t) * w + c;
  }
  OPFORGE_HOST_DEVICE int64_t yAt(int64_t b, int64_t h, int64_t i, int64_t c) const {
    return in3d ? (b * Sq + i) * Hq * dv + h * dv + c : ((b * Hq + h) * Sq + i) * dv + c;
  }
  OPFORGE_HOST_DEVICE int64_t qkAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return ((b * Hq + h) * Sq + i) * T + j;
  }
  OPFORGE_HOST_DEVICE int64_t maskAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3];
  }
  // The causal / window offset of batch row b: keys before the query block (nonpad_kv_seqlen[b]
  // - Sq for an external cache, the past length otherwise).
  OPFORGE_HOST_DEVICE int64_t offsetOf(int64_t nonpad) const {
    return has_nonpad ? nonpad - Sq : P;
  }
  // Whether query i may attend key j (mask aside); `nonpad` is the row's nonpad_kv_seqlen.
  OPFORGE_HOST_DEVICE bool allowed(int64_t i, int64_t j, int64_t nonpad) const {
    const int64_t off = offsetOf(nonpad);
    if (causal && j > i + off) return false;
    const int64_t diff = i + off - j;
    if (left >= 0 && diff > left) return false;
    if (right >= 0 && -diff > right) return false;
    if (has_nonpad && j >= nonpad) return false;
    return true;
  }
};

}  // namespace opforge::ops
