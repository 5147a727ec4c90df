// libFuzzer target: the ONNX importer on arbitrary bytes (importOnnxBytes, external data
// forbidden); an accepted model is built for the CPU and run (fuzz_util.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opforge;
  auto net = importOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx",
                             "", fuzz::registry());
  if (!net) {
    fuzz::expectMessage(net.status(), "importOnnxBytes");
    return 0;
  }
  fuzz::buildAndRun(*net);
  return 0;
}
