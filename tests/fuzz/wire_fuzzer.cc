// libFuzzer target: the wire format (src/common/wire.h) that plans and the plugin ABI use. The
// first byte picks a decoder; the rest is decoded. A value that decodes must encode to bytes
// that decode to a value with the same encoding (decode -> encode is a fixed point).
#include <cstdio>
#include <cstdlib>

#include "common/wire.h"
#include "fuzz_util.h"

namespace {
using namespace opforge;
using wire::Reader;
using wire::Writer;

template <typename Get, typename Put>
void roundTrip(const uint8_t* data, size_t size, Get get, Put put) {
  Reader r(data, size, "fuzz.wire");
  auto v = get(r);
  if (!r.ok()) {
    opforge::fuzz::expectMessage(r.status(), "wire decode");
    return;
  }
  Writer w;
  put(w, v);
  const std::vector<uint8_t> once = w.take();
  Reader r2(once.data(), once.size(), "fuzz.wire (encoded again)");
  auto v2 = get(r2);
  Writer w2;
  put(w2, v2);
  if (!r2.ok() || !r2.atEnd() || w2.buffer() != once) {
    std::fprintf(stderr, "fuzz: wire round trip differs (%s)\n", r2.status().message().c_str());
    std::abort();
  }
}

#define OPFORGE_FUZZ_CASE(n, getter)                        \
  case n:                                                   \
    roundTrip(                                              \
        data, size, [](Reader& r) { return getter(r); },    \
        [](Writer& w, const auto& v) { wire::put(w, v); }); \
    break
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  ++data;
  --size;
  switch (which % 10) {
    OPFORGE_FUZZ_CASE(0, wire::getDimExpr);
    OPFORGE_FUZZ_CASE(1, wire::getDims);
    OPFORGE_FUZZ_CASE(2, wire::getTensorDesc);
    OPFORGE_FUZZ_CASE(3, wire::getAttrValue);
    OPFORGE_FUZZ_CASE(4, wire::getAttrMap);
    OPFORGE_FUZZ_CASE(5, wire::getSchema);
    OPFORGE_FUZZ_CASE(6, wire::getSymDesc);
    OPFORGE_FUZZ_CASE(7, wire::getAssertion);
    OPFORGE_FUZZ_CASE(8, wire::getShapeQuery);
    default:
      OPFORGE_FUZZ_CASE(9, wire::getShapeAnswer);
  }
  return 0;
}
