// The text of a device error record (opforge/device_error.h).
#include "opforge/device_error.h"

namespace opforge {

namespace {
std::string inputName(int32_t i, const std::vector<std::string>& inputs) {
  return i >= 0 && static_cast<size_t>(i) < inputs.size() ? "input '" + inputs[i] + "'"
                                                          : "input " + std::to_string(i);
}
}  // namespace

std::string describeDeviceError(const DeviceErrorRecord& r,
                                const std::vector<std::string>& inputs) {
  const std::string in = inputName(r.input, inputs);
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
    case kDeviceErrorRegion: {
      const bool named = r.target >= 0 && static_cast<size_t>(r.target) < inputs.size();
      const std::string target = named ? inputs[r.target] : "input " + std::to_string(r.target);
      return in + " holds " + std::to_string(r.value) + " at position " +
             std::to_string(r.position) + ": it addresses [" + std::to_string(r.value) + ", " +
             std::to_string(r.value + r.length) + ") outside " + target + "'s " +
             std::to_string(r.extent) + " entries along axis " + std::to_string(r.axis);
    }
    case kDeviceErrorNegative:
      return in + " holds " + std::to_string(r.value) + " at position " +
             std::to_string(r.position) + ", a size that must not be negative";
    case kDeviceErrorLimit:
      if (r.value < 0) return in + " holds NaN at position " + std::to_string(r.position);
      return in + " at position " + std::to_string(r.position) + " asks for " +
             std::to_string(r.value) + ", more than the limit of " + std::to_string(r.extent);
    default:
      return "the device reported error kind " + std::to_string(r.kind) + " (" + in + ")";
  }
}

}  // namespace opforge
