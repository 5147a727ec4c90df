// device.h — the GPU as the runtime and the builder see it (internal; programs outside the
// engine use the public opforge/device.h).
//
// The engine's executor and builder use this narrow interface instead of calling the CUDA
// runtime directly, so that the core has a single place that knows CUDA (cuda_device.cc, built
// only when nvcc exists). Every call reports errors as Status naming the CUDA error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "opforge/device.h"
#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge::rt {

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  virtual const DeviceInfo& info() const = 0;
  // Where layers run: the Device their tensors are on.
  virtual Device kind() const = 0;
  // Memory from malloc() is host memory the caller may read and write directly (the host
  // device): inputs and outputs need no staging copies, weights no upload, CPU layers no fallback.
  virtual bool hostVisible() const = 0;
  // Stream capture into graphs (beginCapture/endCapture/graphLaunch) is available.
  virtual bool canCapture() const = 0;
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
  virtual Result<float> eventElapsedMs(void* start, void* end) = 0;
  // CUDA graphs: capture the work issued to `stream` between begin and end, then replay it.
  virtual Status beginCapture(void* stream) = 0;
  virtual Status endCapture(void* stream,
                            void** graph_exec) = 0;  // *graph_exec null if capture failed
  virtual Status graphLaunch(void* graph_exec, void* stream) = 0;
  virtual void graphDestroy(void* graph_exec) = 0;
  // The sticky/last launch error, cleared.
  virtual Status lastError() = 0;
};

// The host as a device (CPU plans), created once: malloc is 256-byte aligned host memory (more
// than the host's physical memory is refused before it is asked for: with overcommit, terabytes
// can be granted and the first writes end the process); copies and memsets run at once; a stream
// is a token (work runs synchronously); events read the host's steady clock; no graph capture.
DeviceApi* hostDevice();

// The CUDA device (device 0), created once. Errors: opforge built without CUDA; no usable GPU
// (the CUDA error named).
Result<DeviceApi*> cudaDevice();

}  // namespace opforge::rt
