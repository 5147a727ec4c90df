// libFuzzer target: the ONNX importer on arbitrary bytes (importOnnxBytes, external data
// forbidden); an accepted model is built for the CPU and run (fuzz_util.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  opforge::fuzz::importBuildAndRun(data, size);
  return 0;
}
