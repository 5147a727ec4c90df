// channels_last.h — a tensor's bytes between row-major and channels-last, for tests that lay inputs
// out channels-last and read outputs back (the op references' test, the GPU runner and benches).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "opforge/op.h"

namespace opforge::test {

// t's bytes laid out channels-last ([N, C, S...] stored as [N, S..., C]; to_hwc) or back from it
// to row-major; a tensor of rank < 3 has the same bytes either way.
inline std::vector<uint8_t> channelsLastBytes(const TensorValue& t, bool to_hwc) {
  const auto& d = t.desc.dims;
  if (d.size() < 3) return t.data;
  const size_t es = dtypeSize(t.desc.dtype);
  int64_t s = 1;
  for (size_t a = 2; a < d.size(); ++a) s *= d[a];
  std::vector<uint8_t> y(t.data.size());
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t p = 0; p < s; ++p) {
        const size_t lin = ((b * d[1] + c) * s + p) * es, hwc = ((b * s + p) * d[1] + c) * es;
        std::memcpy(y.data() + (to_hwc ? hwc : lin), t.data.data() + (to_hwc ? lin : hwc), es);
      }
  return y;
}

}  // namespace opforge::test
