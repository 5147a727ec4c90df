#include "device.h"

namespace opforge {

std::string DeviceInfo::describe() const {
  return name + ", " + arch() + ", CUDA " + std::to_string(runtime_version / 1000) + "." +
         std::to_string((runtime_version % 1000) / 10);
}

Result<DeviceInfo> cudaDeviceInfo() {
  OPFORGE_ASSIGN_OR_RETURN(rt::DeviceApi * dev, rt::cudaDevice());
  return dev->info();
}

namespace rt {

#ifndef OPFORGE_WITH_CUDA
Result<DeviceApi*> cudaDevice() {
  return Status::unsupported(
      "this opforge was built without CUDA (no nvcc at configure time); "
      "rebuild with the CUDA toolkit installed to run on a GPU");
}
#endif

}  // namespace rt
}  // namespace opforge
