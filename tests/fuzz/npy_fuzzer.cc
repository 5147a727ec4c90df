// libFuzzer target: the .npy reader (npy::decode, the parser behind npy::read) on arbitrary bytes.
// An accepted array must survive a round trip: encode(decode(x)) decodes to the same array.
#include <cstdio>
#include <cstdlib>

#include "fuzz_util.h"
#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opforge;
  auto t = npy::decode(data, size, "fuzz.npy");
  if (!t) {
    fuzz::expectMessage(t.status(), "npy::decode");
    return 0;
  }
  const std::vector<uint8_t> again = npy::encode(t->desc, t->data.data());
  auto u = npy::decode(again.data(), again.size(), "fuzz.npy (encoded again)");
  if (!u || u->desc.dtype != t->desc.dtype || u->desc.dims != t->desc.dims || u->data != t->data) {
    std::fprintf(stderr, "fuzz: .npy round trip differs: %s\n",
                 u ? "other array" : u.status().message().c_str());
    std::abort();
  }
  return 0;
}
