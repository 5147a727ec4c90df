// device_error.h — run-time errors that CUDA tactics find on the device (an index out of range in
// Gather, ScatterND, GatherElements, ...), reported by the engine after the run.
//
// Tactics may not synchronize, so a kernel can not return an error. Instead the engine gives each
// CUDA layer a record in pinned host memory that the device can write (unified addressing): before
// it calls a layer's tactic, the runtime sets the calling thread's "current record"; a tactic that
// can detect bad data passes layerErrorRecord() to its kernels, which clamp the bad access (never
// read or write out of bounds) and fill the record. After the stream is synchronized the runtime
// reads the records of the layers that asked for one and turns a flagged record into an error
// naming the layer, its tactic, the input and the offending value.
//
// Without a current record (the autotuner, tests that call a tactic directly) kernels still clamp;
// nothing is reported. The record pointer is baked into the launch, so CUDA graph replays report
// into the same record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opforge::ops {

// What a kernel found. `flag` != 0 marks the record as written. Two 16-byte halves are each
// written with one store, so a record is never torn within (value, position).
struct alignas(16) DeviceErrorRecord {
  int64_t value;     // the offending index value
  int64_t position;  // flat position of the value in its input
  int64_t extent;    // the size of the axis it indexes
  int32_t axis;      // that axis
  int32_t input;     // which input of the op holds it
  uint32_t flag;     // set last
  uint32_t kind;     // DeviceErrorKind
  uint64_t reserved[3];
};
static_assert(sizeof(DeviceErrorRecord) == 64, "DeviceErrorRecord is 64 bytes");

enum DeviceErrorKind : uint32_t {
  kDeviceErrorIndex = 1,    // index outside [-extent, extent)
  kDeviceErrorDivZero = 2,  // integer division or modulo by zero
  kDeviceErrorValue = 3,    // a value the op can not use (e.g. an axis out of range)
  kDeviceErrorSize = 4,     // a run-time size larger than the planned buffer
};

// The record the current thread's next CUDA layer may write, or nullptr (set by the runtime).
DeviceErrorRecord* layerErrorRecord();
// Sets the current record (nullptr: none) and clears the "used" mark.
void setLayerErrorRecord(DeviceErrorRecord* record);
// Whether a tactic asked for the current record since it was set.
bool layerErrorRecordUsed();

// "input 'indices' holds 7 at position 3, outside [-5, 4] (axis 0 has size 5)"; `inputs` are the
// op's input names.
std::string describeDeviceError(const DeviceErrorRecord& r, const std::vector<std::string>& inputs);

}  // namespace opforge::ops
