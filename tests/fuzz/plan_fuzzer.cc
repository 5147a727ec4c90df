// libFuzzer target: the plan loader. The input is a plan file (seeds: plans the CLI built) whose
// header checksum is recomputed before loading, so that mutations reach the validation behind the
// checksum (the checksum is not tamper-proofing). A plan that loads is run on the CPU.
#include <cstddef>
#include <cstring>
#include <vector>

#include "common/wire.h"
#include "fuzz_util.h"
#include "plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opforge;
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= plan::kHeaderSize) {
    // The size and the checksum as a writer would set them; every other header field as mutated.
    const uint64_t file_size = bytes.size();
    std::memcpy(bytes.data() + offsetof(plan::Header, file_size), &file_size, sizeof(file_size));
    const uint64_t sum =
        wire::checksum(bytes.data() + plan::kHeaderSize, bytes.size() - plan::kHeaderSize);
    std::memcpy(bytes.data() + offsetof(plan::Header, checksum), &sum, sizeof(sum));
  }
  auto engine = Engine::loadMemory(std::move(bytes), "fuzz.plan", fuzz::registry());
  if (!engine) {
    fuzz::expectMessage(engine.status(), "Engine::loadMemory");
    return 0;
  }
  fuzz::runOnCpu(*engine);
  return 0;
}
