// libFuzzer target: the plan loader. The input is a plan file (seeds: plans the CLI built) whose
// header checksum (and size, and plugin ABI version) is set before loading, so that mutations
// reach the validation behind the checksum (the checksum is not tamper-proofing). A plan that
// loads is run on the CPU.
#include <cstddef>
#include <cstring>
#include <vector>

#include "common/wire.h"
#include "fuzz_util.h"
#include "opforge/plugin_abi.h"
#include "plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opforge;
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= plan::kHeaderSize) {
    // The size, the checksum and the plugin ABI version as a writer would set them (a regression
    // kept from before an ABI bump still reaches what it found); every other header field as
    // mutated.
    const uint64_t file_size = bytes.size();
    std::memcpy(bytes.data() + offsetof(plan::Header, file_size), &file_size, sizeof(file_size));
    const uint32_t abi = OPFORGE_PLUGIN_ABI_VERSION;
    std::memcpy(bytes.data() + offsetof(plan::Header, abi_version), &abi, sizeof(abi));
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
