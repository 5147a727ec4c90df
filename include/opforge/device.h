// opforge/device.h — which GPU this opforge can run on.
//
// Contract:
//   - cudaDeviceInfo() describes CUDA device 0, the device CUDA plans are built for and run on.
//     It initializes the CUDA runtime once (the first call may take a moment); later calls return
//     the same description.
//   - Errors say why there is no device: kUnsupported, opforge was built without CUDA; kNotFound,
//     the CUDA runtime sees no GPU; kRuntime, the device could not be queried (the CUDA error is
//     named in both). A program
//     that can fall back to the CPU prints the message and builds with Backend::kCpu.
//   - The strings are for people (reports, logs); arch() is also what a plan records and what
//     loading a plan compares with the GPU it runs on.
//
// Usage:
//   auto dev = opforge::cudaDeviceInfo();
//   opforge::Backend backend = dev ? opforge::Backend::kCuda : opforge::Backend::kCpu;
//   if (dev) std::printf("device: %s\n", dev->describe().c_str());   // "NVIDIA H200, sm_90,
//   CUDA 13.0" else std::printf("no GPU (%s); running on the CPU\n",
//   dev.status().message().c_str());
#pragma once

#include <cstddef>
#include <string>

#include "opforge/status.h"

namespace opforge {

struct DeviceInfo {
  std::string name;  // "NVIDIA H200"
  int sm_major = 0, sm_minor = 0;
  int runtime_version = 0;  // CUDA runtime, e.g. 13000 for 13.0
  int driver_version = 0;   // CUDA driver, same encoding
  int multiprocessors = 0;
  size_t memory_bytes = 0;  // global memory
  size_t l2_bytes = 0;      // L2 cache
  // "NVIDIA H200, sm_90, CUDA 13.0"
  std::string describe() const;
  // "sm_90"
  std::string arch() const { return "sm_" + std::to_string(sm_major) + std::to_string(sm_minor); }
};

// CUDA device 0. Errors: built without CUDA; no usable GPU (the CUDA error named).
Result<DeviceInfo> cudaDeviceInfo();

}  // namespace opforge
