// gpu_runner.h — runs one tactic of an op on the CUDA device, on host inputs, with poisoned outputs
// and workspace, and brings the outputs back (data-dependent sizes applied). Used by the GPU tests
// (tests/gpu) and the GPU benchmarks (bench/gpu).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "opforge/network.h"
#include "opforge/registry.h"

// Exits the process with the file, line, call and CUDA's message when `expr` fails (benchmarks and
// tools; tests report through gtest instead).
#define CUDA_OK(expr)                                                                             \
  do {                                                                                            \
    cudaError_t e_ = (expr);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)

namespace opforge::gpu {

// True when a CUDA device is usable; `why` says why not.
bool deviceAvailable(std::string* why = nullptr);

// The contrib op library next to this executable (../lib/libopforge_ops.so), else under the build
// directory the binary was configured in; OPFORGE_OPS_LIBRARY overrides both.
std::string opsLibraryPath();
std::shared_ptr<Registry> opsRegistry();  // built-in ops + the contrib library (loaded once)

// Device memory that frees itself.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }
  size_t size() const { return n_; }
  bool ok() const { return p_ != nullptr || n_ == 0; }

 private:
  void* p_ = nullptr;
  size_t n_ = 0;
};

struct RunOptions {
  uint8_t poison = 0xff;  // outputs and workspace are filled with this byte first (0xff: NaN)
  bool misalign = false;  // offset every tensor by its element size (not 16-byte aligned)
  bool in_place = true;   // outputs declared as aliases share their input's buffer
  bool constants_visible =
      true;  // value inputs are constants to the shape rule (build-time checks)
  // Run inside a CUDA graph capture (cudaStreamCaptureModeGlobal: a tactic that calls a
  // synchronizing API — cudaStreamSynchronize, cudaMemcpy, cudaMalloc, ... — invalidates the
  // capture, and runOnDevice fails naming it), then replay the graph.
  bool capture = false;
  int repeat = 1;    // runs (the last one's outputs are returned)
  bool hwc = false;  // tensors of rank >= 3 travel channels-last (Format::kHWC); the
                     // outputs come back LINEAR
  // Per input / output, the format it travels in (rank >= 3; after `hwc`; empty: as `hwc` says).
  // Outputs come back LINEAR whatever their format on the device (opforge::Reformat's tests).
  std::vector<Format> in_formats, out_formats;
};

struct DeviceRun {
  // What the tactic returned, or, when it returned OK, the OutOfRange error its kernels reported
  // into the device error record (opforge/device_error.h) as the engine words it. The outputs are
  // read back anyway.
  Status status;
  std::vector<TensorValue> outputs;  // real shapes
  DeviceErrorRecord record{};        // the layer's record after the run (flag 0: nothing reported)
};

// An op instance with concrete output descriptions (size tensors at their upper bound) and the
// workspace `tactic` needs.
struct Prepared {
  std::shared_ptr<KernelInstance> instance;
  std::vector<TensorDesc> in, out;
  std::vector<int> alias;  // per output: aliased input or -1
  std::vector<SizeRecord> sizes;
  std::vector<std::vector<DimExpr>> out_dims;  // symbolic (size-tensor symbols unbound)
  size_t workspace = 0;
};
Result<Prepared> prepare(Registry& reg, const std::string& key, const Attrs& attrs,
                         const std::vector<TensorValue>& inputs, int32_t tactic,
                         bool constants_visible, bool hwc = false);
// The same with RunOptions' formats (hwc, in_formats, out_formats) and constants_visible.
Result<Prepared> prepare(Registry& reg, const std::string& key, const Attrs& attrs,
                         const std::vector<TensorValue>& inputs, int32_t tactic,
                         const RunOptions& opt);

// Runs tactic `tactic` of `key` on the device, handing it a device error record in pinned host
// memory as the engine does (cleared before each repeat). Errors from CUDA or from setting up (bad
// attributes, shapes, a tactic that does not apply) come back as the Result's status; the tactic's
// own status is DeviceRun::status.
Result<DeviceRun> runOnDevice(Registry& reg, const std::string& key, const Attrs& attrs,
                              const std::vector<TensorValue>& inputs, int32_t tactic,
                              const RunOptions& opt = {});

}  // namespace opforge::gpu
