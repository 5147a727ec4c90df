#include "device_error.h"

namespace opforge::ops {

namespace {
struct Current {
  DeviceErrorRecord* record = nullptr;
  bool used = false;
};
thread_local Current t_current;
}  // namespace

DeviceErrorRecord* layerErrorRecord() {
  t_current.used = true;
  return t_current.record;
}

void setLayerErrorRecord(DeviceErrorRecord* record) {
  t_current.record = record;
  t_current.used = false;
}

bool layerErrorRecordUsed() {
  return t_current.used && t_current.record != nullptr;
}

std::string describeDeviceError(const DeviceErrorRecord& r,
                                const std::vector<std::string>& inputs) {
  const std::string in = r.input >= 0 && static_cast<size_t>(r.input) < inputs.size()
                             ? "input '" + inputs[r.input] + "'"
                             : "input " + std::to_string(r.input);
  switch (r.kind) {
    case kDeviceErrorIndex:
      return in + " holds " + std::to_string(r.value) + " at position " +
             std::to_string(r.position) + ", outside [" + std::to_string(-r.extent) + ", " +
             std::to_string(r.extent - 1) + "] (axis " + std::to_string(r.axis) + " has size " +
             std::to_string(r.extent) + ")";
    case kDeviceErrorDivZero:
      return in + " holds 0 at position " + std::to_string(r.position) +
             " (integer division or modulo by zero)";
    case kDeviceErrorValue:
      return in + " holds " + std::to_string(r.value) + " at position " +
             std::to_string(r.position) + ", which is outside the valid range [" +
             std::to_string(-r.extent) + ", " + std::to_string(r.extent - 1) + "]";
    case kDeviceErrorSize:
      return "a size computed from " + in + " at run time (" + std::to_string(r.value) +
             ") does not match the planned size " + std::to_string(r.extent) + " (axis " +
             std::to_string(r.axis) + ")";
    default:
      return "the device reported error kind " + std::to_string(r.kind) + " (" + in + ")";
  }
}

}  // namespace opforge::ops
