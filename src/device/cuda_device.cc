// The CUDA implementation of DeviceApi (compiled only when CUDA is available).
#include <cuda_runtime.h>

#include <mutex>

#include "device.h"

namespace opforge::rt {

namespace {
Status check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::runtime(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
}

class CudaDevice final : public DeviceApi {
 public:
  explicit CudaDevice(DeviceInfo info) : info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }
  Device kind() const override { return Device::kCuda; }
  bool hostVisible() const override { return false; }
  bool canCapture() const override { return true; }
  Status malloc(void** p, size_t bytes) override {
    *p = nullptr;
    if (bytes == 0) return Status::ok();
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_b = 0, total = 0;
      (void)cudaMemGetInfo(&free_b, &total);
      return Status::runtime("out of device memory: asked for " + std::to_string(bytes) +
                             " bytes, " + std::to_string(free_b) + " of " + std::to_string(total) +
                             " free");
    }
    return check(e, "cudaMalloc");
  }
  void free(void* p) override {
    if (p) (void)cudaFree(p);
  }
  Status mallocHost(void** p, size_t bytes) override {
    *p = nullptr;
    if (bytes == 0) return Status::ok();
    return check(cudaMallocHost(p, bytes), "cudaMallocHost");
  }
  void freeHost(void* p) override {
    if (p) (void)cudaFreeHost(p);
  }
  Status memcpyAsync(void* dst, const void* src, size_t bytes, CopyKind kind,
                     void* stream) override {
    if (bytes == 0) return Status::ok();
    cudaMemcpyKind k = kind == CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                       : kind == CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                         : cudaMemcpyDeviceToDevice;
    return check(cudaMemcpyAsync(dst, src, bytes, k, static_cast<cudaStream_t>(stream)),
                 "cudaMemcpyAsync");
  }
  Status memsetAsync(void* dst, int value, size_t bytes, void* stream) override {
    if (bytes == 0) return Status::ok();
    return check(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)),
                 "cudaMemsetAsync");
  }
  Status streamCreate(void** s) override {
    return check(
        cudaStreamCreateWithFlags(reinterpret_cast<cudaStream_t*>(s), cudaStreamNonBlocking),
        "cudaStreamCreate");
  }
  void streamDestroy(void* s) override {
    if (s) (void)cudaStreamDestroy(static_cast<cudaStream_t>(s));
  }
  Status streamSynchronize(void* s) override {
    return check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize");
  }
  Status eventCreate(void** e) override {
    return check(cudaEventCreate(reinterpret_cast<cudaEvent_t*>(e)), "cudaEventCreate");
  }
  void eventDestroy(void* e) override {
    if (e) (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
  }
  Status eventRecord(void* e, void* s) override {
    return check(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(s)),
                 "cudaEventRecord");
  }
  Result<float> eventElapsedMs(void* a, void* b) override {
    float ms = 0;
    OPFORGE_RETURN_IF_ERROR(
        check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(a), static_cast<cudaEvent_t>(b)),
              "cudaEventElapsedTime"));
    return ms;
  }
  Status beginCapture(void* s) override {
    return check(
        cudaStreamBeginCapture(static_cast<cudaStream_t>(s), cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
  }
  Status endCapture(void* s, void** exec) override {
    *exec = nullptr;
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaStreamEndCapture(static_cast<cudaStream_t>(s), &g);
    if (e != cudaSuccess || !g) {
      (void)cudaGetLastError();
      if (g) cudaGraphDestroy(g);
      return Status::ok();  // capture invalidated: the caller runs without a graph
    }
    cudaGraphExec_t ge = nullptr;
    e = cudaGraphInstantiate(&ge, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return Status::ok();
    }
    *exec = ge;
    return Status::ok();
  }
  Status graphLaunch(void* g, void* s) override {
    return check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(g), static_cast<cudaStream_t>(s)),
                 "cudaGraphLaunch");
  }
  void graphDestroy(void* g) override {
    if (g) (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(g));
  }
  Status lastError() override { return check(cudaGetLastError(), "CUDA"); }

 private:
  DeviceInfo info_;
};
}  // namespace

Result<DeviceApi*> cudaDevice() {
  static std::once_flag once;
  static DeviceApi* dev = nullptr;
  static Status err;
  std::call_once(once, [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      (void)cudaGetLastError();
      err = Status::notFound(std::string("no CUDA GPU is available (") +
                             (e != cudaSuccess
                                  ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                                  : std::string("0 devices")) +
                             ")");
      return;
    }
    cudaDeviceProp p{};
    if (Status st = check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties"); !st) {
      err = st;
      return;
    }
    DeviceInfo info;
    info.name = p.name;
    info.sm_major = p.major;
    info.sm_minor = p.minor;
    info.multiprocessors = p.multiProcessorCount;
    info.memory_bytes = p.totalGlobalMem;
    info.l2_bytes = static_cast<size_t>(p.l2CacheSize);
    (void)cudaRuntimeGetVersion(&info.runtime_version);
    (void)cudaDriverGetVersion(&info.driver_version);
    dev = new CudaDevice(info);
  });
  if (!dev) return err;
  return dev;
}

}  // namespace opforge::rt
