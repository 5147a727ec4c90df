// bytes.h — the byte count of `elements` elements of `es` bytes, as the CPU references of the
// data-movement ops compute their row and block sizes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace opforge::ops {

// Wrapping: an empty tensor's other dims may multiply past int64 (a fuzzer's [0, 2^31, 2^31]);
// its sizes address no memory. For a non-empty tensor the count fits, and this is the product.
inline int64_t bytesOf(int64_t elements, size_t es) {
  return static_cast<int64_t>(static_cast<uint64_t>(elements) * es);
}

}  // namespace opforge::ops
