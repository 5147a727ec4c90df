// index_cuda.cuh — helpers of the indexing ops' CUDA tactics (Gather*, Scatter*): the widest copy
// unit for contiguous slices, and read-modify-write of one element for the scatter reductions
// (a compare-and-swap loop on the enclosing 4- or 8-byte word, any element type).
#pragma once

#include "cuda_common.cuh"

namespace opforge::ops {

// The widest unit (16, 8, 4, 2 or 1 bytes) dividing `bytes` and every pointer's address.
inline size_t copyUnit(int64_t bytes, std::initializer_list<const void*> ptrs) {
  for (size_t u : {size_t{16}, size_t{8}, size_t{4}, size_t{2}}) {
    bool ok = bytes % static_cast<int64_t>(u) == 0;
    for (const void* p : ptrs) ok = ok && reinterpret_cast<uintptr_t>(p) % u == 0;
    if (ok) return u;
  }
  return 1;
}

// Calls f(TypeTag<U>{}) for an unsigned type of `unit` bytes (uint4 for 16).
template <typename F>
Status visitUnit(size_t unit, F&& f) {
  switch (unit) {
    case 16:
      return f(TypeTag<uint4>{});
    case 8:
      return f(TypeTag<uint64_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    default:
      return f(TypeTag<uint8_t>{});
  }
}

enum ScatterReduction : int {
  kScatterNone = 0,
  kScatterAdd,
  kScatterMul,
  kScatterMax,
  kScatterMin
};

inline int scatterReductionOf(const AttrMap& a) {
  const auto r = a.get<std::string>("reduction");
  return r == "add"   ? kScatterAdd
         : r == "mul" ? kScatterMul
         : r == "max" ? kScatterMax
         : r == "min" ? kScatterMin
                      : kScatterNone;
}

// dst (op) v in the compute type, as common/scatter.h's scatterOne.
template <typename S>
__device__ __forceinline__ S scatterCombine(S dst, S v, int red) {
  using C = typename DNum<S>::C;
  if (red == kScatterNone) return v;
  const C a = DNum<S>::load(dst), b = DNum<S>::load(v);
  C r;
  if (red == kScatterAdd)
    r = static_cast<C>(a + b);
  else if (red == kScatterMul)
    r = static_cast<C>(a * b);
  else if (red == kScatterMax)
    r = a < b ? b : a;
  else
    r = b < a ? b : a;
  return DNum<S>::store(r);
}

template <typename To, typename From>
__device__ __forceinline__ To bitsAs(From f) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

// *addr = scatterCombine(*addr, v, red), atomically with respect to other device threads.
template <typename S>
__device__ void atomicCombine(S* addr, S v, int red) {
  if constexpr (sizeof(S) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      const S nv = scatterCombine(bitsAs<S>(assumed), v, red);
      old = atomicCAS(w, assumed, bitsAs<unsigned long long>(nv));
    } while (assumed != old);
  } else if constexpr (sizeof(S) == 4) {
    auto* w = reinterpret_cast<unsigned int*>(addr);
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      const S nv = scatterCombine(bitsAs<S>(assumed), v, red);
      old = atomicCAS(w, assumed, bitsAs<unsigned int>(nv));
    } while (assumed != old);
  } else {
    // 1- or 2-byte elements: the aligned 4-byte word that holds them (inside the 256-byte
    // aligned allocation).
    using Bits = std::conditional_t<sizeof(S) == 2, uint16_t, uint8_t>;
    const uintptr_t p = reinterpret_cast<uintptr_t>(addr);
    auto* w = reinterpret_cast<unsigned int*>(p & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(p & 3u) * 8u;
    const unsigned mask = ((1u << (sizeof(S) * 8)) - 1u) << shift;
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      const S cur = bitsAs<S>(static_cast<Bits>((assumed & mask) >> shift));
      const S nv = scatterCombine(cur, v, red);
      const unsigned int word =
          (assumed & ~mask) | (static_cast<unsigned int>(bitsAs<Bits>(nv)) << shift);
      old = atomicCAS(w, assumed, word);
    } while (assumed != old);
  }
}

}  // namespace opforge::ops
