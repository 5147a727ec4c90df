// device.h — the GPU as the runtime and the builder see it (internal).
//
// The engine's executor, builder and CLI use this narrow interface instead of calling the CUDA
// runtime directly, so that the core has a single place that knows CUDA (cuda_device.cc, built
// only when nvcc exists). Every call reports errors as Status naming the CUDA error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "opforge/status.h"

namespace opforge::rt {

struct DeviceInfo {
  std::string name;  // "NVIDIA H200"
  int sm_major = 0, sm_minor = 0;
  int runtime_version = 0;  // CUDA runtime, e.g. 13000
  int driver_version = 0;
  int multiprocessors = 0;
  size_t memory_bytes = 0;
  size_t l2_bytes = 0;
  // "NVIDIA H200, sm_90, CUDA 13.0"
  std::string describe() const;
  std::string arch() const { return "sm_" + std::to_string(sm_major) + std::to_string(sm_minor); }
};

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual Status malloc(void** p, size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual Status mallocHost(void** p, size_t bytes) = 0;  // pinned
  virtual void freeHost(void* p) = 0;
  virtual Status memcpyAsync(void* dst, const void* src, size_t bytes, CopyKind kind,
                             void* stream) = 0;
  virtual Status memsetAsync(void* dst, int value, size_t bytes, void* stream) = 0;
  virtual Status streamCreate(void** stream) = 0;
  virtual void streamDestroy(void* stream) = 0;
  virtual Status streamSynchronize(void* stream) = 0;
  virtual Status eventCreate(void** event) = 0;
  virtual void eventDestroy(void* event) = 0;
  virtual Status eventRecord(void* event, void* stream) = 0;
  virtual Status eventSynchronize(void* event) = 0;
  virtual Result<float> eventElapsedMs(void* start, void* end) = 0;
  // CUDA graphs: capture the work issued to `stream` between begin and end, then replay it.
  virtual Status beginCapture(void* stream) = 0;
  virtual Status endCapture(void* stream,
                            void** graph_exec) = 0;  // *graph_exec null if capture failed
  virtual Status graphLaunch(void* graph_exec, void* stream) = 0;
  virtual void graphDestroy(void* graph_exec) = 0;
  // The sticky/last launch error, cleared.
  virtual Status lastError() = 0;
  virtual Result<size_t> freeMemory() = 0;
};

// The CUDA device (device 0), created once. Errors: opforge built without CUDA; no usable GPU
// (the CUDA error named).
Result<DeviceApi*> cudaDevice();

}  // namespace opforge::rt
