// The host as a DeviceApi: what CPU plans run on (device.h).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "device.h"

namespace opforge::rt {

namespace {

using Clock = std::chrono::steady_clock;

// The host's physical memory in bytes (0: unknown).
uint64_t physicalMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

class HostDevice final : public DeviceApi {
 public:
  HostDevice() { info_.name = "host CPU"; }
  const DeviceInfo& info() const override { return info_; }
  Device kind() const override { return Device::kCpu; }
  bool hostVisible() const override { return true; }
  bool canCapture() const override { return false; }
  Status malloc(void** p, size_t bytes) override {
    *p = nullptr;
    if (bytes == 0) return Status::ok();
    const uint64_t host = physicalMemory();
    if ((host && bytes > host) || ::posix_memalign(p, 256, bytes) != 0) {
      *p = nullptr;
      return Status::runtime("cannot allocate " + std::to_string(bytes) + " bytes of host memory" +
                             (host ? " (the host has " + std::to_string(host) + " bytes)" : ""));
    }
    return Status::ok();
  }
  void free(void* p) override { std::free(p); }
  Status mallocHost(void** p, size_t bytes) override { return malloc(p, bytes); }
  void freeHost(void* p) override { std::free(p); }
  Status memcpyAsync(void* dst, const void* src, size_t bytes, CopyKind, void*) override {
    if (bytes) std::memmove(dst, src, bytes);
    return Status::ok();
  }
  Status memsetAsync(void* dst, int value, size_t bytes, void*) override {
    if (bytes) std::memset(dst, value, bytes);
    return Status::ok();
  }
  Status streamCreate(void** s) override {
    *s = &token_;  // work on the host runs when it is issued
    return Status::ok();
  }
  void streamDestroy(void*) override {}
  Status streamSynchronize(void*) override { return Status::ok(); }
  Status eventCreate(void** e) override {
    *e = new Clock::time_point(Clock::now());
    return Status::ok();
  }
  void eventDestroy(void* e) override { delete static_cast<Clock::time_point*>(e); }
  Status eventRecord(void* e, void*) override {
    *static_cast<Clock::time_point*>(e) = Clock::now();
    return Status::ok();
  }
  Result<float> eventElapsedMs(void* a, void* b) override {
    return std::chrono::duration<float, std::milli>(*static_cast<Clock::time_point*>(b) -
                                                    *static_cast<Clock::time_point*>(a))
        .count();
  }
  Status beginCapture(void*) override {
    return Status::unsupported("the host device has no graph capture");
  }
  Status endCapture(void*, void** exec) override {
    *exec = nullptr;
    return Status::ok();
  }
  Status graphLaunch(void*, void*) override {
    return Status::unsupported("the host device has no graphs");
  }
  void graphDestroy(void*) override {}
  Status lastError() override { return Status::ok(); }

 private:
  DeviceInfo info_;
  int token_ = 0;
};

}  // namespace

DeviceApi* hostDevice() {
  static HostDevice dev;
  return &dev;
}

}  // namespace opforge::rt
