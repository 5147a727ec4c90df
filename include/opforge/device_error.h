// opforge/device_error.h — run-time errors that CUDA tactics find on the device (an index out of
// range in Gather, a bad level table in DeformableAggregation, ...), reported by the engine after
// the run.
//
// Tactics may not synchronize (the engine captures whole networks into CUDA graphs), so a kernel
// cannot return an error. Instead the engine gives every CUDA layer a DeviceErrorRecord in pinned
// host memory that the device can write (unified addressing) and hands it to the tactic through
// KernelContext::errorRecord() (C ABI: OpforgeKernelArgs::error_record). A tactic that can detect
// bad data passes the pointer to its kernels, which clamp the bad access (never read or write out
// of bounds) and fill the record with reportDeviceError(). After the stream is synchronized the
// engine reads the record of every CUDA layer and turns a written one into an error naming the
// layer, its op, its tactic and describeDeviceError()'s text.
//
// Ownership: the engine owns the records (one per layer of an execution context, alive as long as
// the context); a tactic only passes the pointer on. errorRecord() is nullptr where nobody reads a
// record (the autotuner, CPU tactics, callers of KernelInstance::run that pass none): kernels must
// then still clamp, and report nothing. The pointer is baked into the launch, so CUDA graph replays
// report into the same record.
//
// Usage (a CUDA tactic):
//
//   __global__ void gatherKernel(..., opforge::DeviceErrorRecord* rec) {
//     int64_t i = idx[t];
//     if (i < -n || i >= n) {
//       opforge::reportDeviceError(rec, opforge::kDeviceErrorIndex, /*input=*/1, i, t, n, axis);
//       i = 0;  // clamp: never read out of bounds
//     }
//     ...
//   }
//   Status gatherCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
//     gatherKernel<<<grid, block, 0, stream>>>(..., k.errorRecord());
//     ...
//   }
//
// and the engine reports "node 'lookup' (ai.onnx::Gather, tactic 1 cuda.gather): input 'indices'
// holds 7 at position 1, outside [-5, 4] (axis 0 has size 5)".
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace opforge {

// What a kernel found; 64 bytes. A reporter writes three 16-byte quarters, each with one store,
// then `flag` last: a record is never torn within (value, position), (extent, axis, input) or
// (length, target, kind).
struct alignas(16) DeviceErrorRecord {
  int64_t value;     // the offending value (an index, a region's start, ...)
  int64_t position;  // flat position of the value in its input
  int64_t extent;    // the size of the axis it indexes (kDeviceErrorRegion: of the target's axis)
  int32_t axis;      // that axis
  int32_t input;     // which input of the op holds the value
  int64_t length;    // kDeviceErrorRegion: the length of the region that starts at `value`
  int32_t target;    // kDeviceErrorRegion: the input the region addresses
  uint32_t kind;     // DeviceErrorKind
  uint32_t flag;     // != 0: the record is written (set last)
  uint32_t reserved[3];
};
static_assert(sizeof(DeviceErrorRecord) == 64, "DeviceErrorRecord is 64 bytes");

enum DeviceErrorKind : uint32_t {
  kDeviceErrorIndex = 1,     // index outside [-extent, extent)
  kDeviceErrorDivZero = 2,   // integer division or modulo by zero
  kDeviceErrorValue = 3,     // a value the op can not use (e.g. an axis out of range)
  kDeviceErrorSize = 4,      // a run-time size larger than the planned buffer
  kDeviceErrorRegion = 5,    // a region [value, value + length) outside [0, extent) of `target`
  kDeviceErrorNegative = 6,  // a size that must not be negative
  kDeviceErrorLimit = 7,     // work computed from the input's data (`value`) above the documented
                             // maximum `extent`; value -1: the data held NaN (no work can be sized)
};

// The record's text, without the layer: "input 'indices' holds 7 at position 3, outside [-5, 4]
// (axis 0 has size 5)". `inputs` are the op's input names (an index without a name is printed as
// a number).
std::string describeDeviceError(const DeviceErrorRecord& r, const std::vector<std::string>& inputs);

#if defined(__CUDACC__)
// Fills `r` (nullptr: does nothing). Plain stores to pinned host memory (no atomics, which host
// memory behind PCIe does not offer): concurrent reporters may overwrite each other quarter by
// quarter, so a record holds one reporter's (value, position) — what the message quotes. `flag` is
// written last, after a system-wide fence.
__device__ __forceinline__ void reportDeviceError(DeviceErrorRecord* r, uint32_t kind, int input,
                                                  int64_t value, int64_t position, int64_t extent,
                                                  int axis, int64_t length = 0, int target = -1) {
  if (!r) return;
  longlong2 a;
  a.x = static_cast<long long>(value);
  a.y = static_cast<long long>(position);
  *reinterpret_cast<longlong2*>(&r->value) = a;
  longlong2 b;
  b.x = static_cast<long long>(extent);
  b.y = static_cast<long long>(static_cast<uint32_t>(axis)) |
        (static_cast<long long>(static_cast<uint32_t>(input)) << 32);
  *reinterpret_cast<longlong2*>(&r->extent) = b;
  longlong2 c;
  c.x = static_cast<long long>(length);
  c.y =
      static_cast<long long>(static_cast<uint32_t>(target)) | (static_cast<long long>(kind) << 32);
  *reinterpret_cast<longlong2*>(&r->length) = c;
  __threadfence_system();
  *reinterpret_cast<volatile uint32_t*>(&r->flag) = 1u;
}
#endif

}  // namespace opforge
