// Device error records (opforge/device_error.h): their text, and the record crossing the plugin C
// ABI into a kernel's KernelContext — also when an older engine passes a shorter kernel-args
// struct. (That CUDA kernels report into it, eagerly and from graph replays, is checked by the GPU
// tests: opforge_gpu_engine_tests, opforge_gpu_tests, opforge_gpu_onnx_tests.)
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "common/wire.h"
#include "opforge/device_error.h"
#include "opforge/plugin_abi.h"
#include "opforge/registry.h"

using namespace opforge;

namespace {
std::string lib(const std::string& name) {
  return std::string(OPFORGE_BINARY_DIR) + "/lib/lib" + name + ".so";
}

DeviceErrorRecord record(uint32_t kind, int64_t value, int64_t position, int64_t extent, int axis,
                         int input, int64_t length = 0, int target = -1) {
  DeviceErrorRecord r{};
  r.kind = kind;
  r.value = value;
  r.position = position;
  r.extent = extent;
  r.axis = axis;
  r.input = input;
  r.length = length;
  r.target = target;
  r.flag = 1;
  return r;
}
}  // namespace

TEST(DeviceError, TheRecordIs64BytesWithItsFieldsWhereDevicesWriteThem) {
  EXPECT_EQ(sizeof(DeviceErrorRecord), 64u);
  EXPECT_EQ(alignof(DeviceErrorRecord), 16u);
  EXPECT_EQ(offsetof(DeviceErrorRecord, value), 0u);
  EXPECT_EQ(offsetof(DeviceErrorRecord, kind), 44u);
  EXPECT_EQ(offsetof(DeviceErrorRecord, flag), 48u);
}

TEST(DeviceError, DescriptionsNameTheInputValueAndPosition) {
  const std::vector<std::string> in{"data", "indices"};
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorIndex, 7, 3, 5, 0, 1), in),
            "input 'indices' holds 7 at position 3, outside [-5, 4] (axis 0 has size 5)");
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorDivZero, 0, 2, 0, 0, 1), in),
            "input 'indices' holds 0 at position 2 (integer division or modulo by zero)");
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorValue, 9, 0, 3, 0, 0), in),
            "input 'data' holds 9 at position 0, which is outside the valid range [-3, 2]");
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorSize, 12, 0, 10, 1, 0), in),
            "a size computed from input 'data' at run time (12) does not match the planned size "
            "10 (axis 1)");
  const std::vector<std::string> da{"mc_ms_feat", "spatial_shape", "scale_start_index"};
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorRegion, 59, 3, 60, 1, 2, 6, 0), da),
            "input 'scale_start_index' holds 59 at position 3: it addresses [59, 65) outside "
            "mc_ms_feat's 60 entries along axis 1");
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorNegative, -4, 0, 0, 0, 1), da),
            "input 'spatial_shape' holds -4 at position 0, a size that must not be negative");
  const std::vector<std::string> roi{"X", "rois", "batch_indices"};
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorLimit, 4000000, 4, 1048576, 0, 1), roi),
            "input 'rois' at position 4 asks for 4000000, more than the limit of 1048576");
  EXPECT_EQ(describeDeviceError(record(kDeviceErrorLimit, -1, 4, 1048576, 0, 1), roi),
            "input 'rois' holds NaN at position 4");
  // Unknown kinds and inputs without a name still say what they can.
  EXPECT_EQ(describeDeviceError(record(99, 0, 0, 0, 0, 5), in),
            "the device reported error kind 99 (input 5)");
}

TEST(DeviceError, KernelInstanceHandsTheRecordThroughTheCAbi) {
  auto reg = Registry::create();
  ASSERT_TRUE(reg->loadLibrary(lib("test_plugin_error_record")).isOk());
  const RegisteredOp* op = reg->find("test::report_error");
  ASSERT_NE(op, nullptr);
  auto inst = op->instantiate("probe", {});
  ASSERT_TRUE(inst.isOk()) << inst.status().message();
  float x[3] = {7.f, 2.f, 3.f}, y[3] = {-1.f, -1.f, -1.f};
  TensorDesc d{DataType::kFloat32, {3}};
  std::vector<Tensor> in{Tensor{d, x, Device::kCpu}}, out{Tensor{d, y, Device::kCpu}};
  // No record: the kernel sees nullptr.
  ASSERT_TRUE((*inst)->run(0, in, out, nullptr, 0, nullptr).isOk());
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], 2.f);
  // A record: the kernel fills it.
  DeviceErrorRecord rec{};
  ASSERT_TRUE((*inst)->run(0, in, out, nullptr, 0, nullptr, &rec).isOk());
  EXPECT_EQ(y[0], 1.f);
  EXPECT_EQ(rec.flag, 1u);
  EXPECT_EQ(rec.kind, kDeviceErrorIndex);
  EXPECT_EQ(rec.value, 7);
  EXPECT_EQ(describeDeviceError(rec, {"x"}),
            "input 'x' holds 7 at position 0, outside [-2, 1] (axis 0 has size 2)");
}

TEST(DeviceError, AnOlderEnginesShorterKernelArgsGiveNoRecord) {
  // Call the library's C entry points as an engine built before `error_record` was appended:
  // struct_size stops short of the field, so the library must not read it.
  void* h = dlopen(lib("test_plugin_error_record").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto get = reinterpret_cast<OpforgeGetLibraryFn>(dlsym(h, OPFORGE_PLUGIN_GET_LIBRARY_SYMBOL));
  ASSERT_NE(get, nullptr);
  const OpforgeLibrary* l = get(OPFORGE_PLUGIN_ABI_VERSION);
  ASSERT_NE(l, nullptr);
  ASSERT_EQ(l->num_ops, 1);
  const OpforgeOp& op = l->ops[0];
  wire::Writer w;
  wire::put(w, AttrMap{});
  char err[256] = {};
  void* instance = nullptr;
  ASSERT_EQ(op.create(&op, w.buffer().data(), w.buffer().size(), &instance, err, sizeof(err)),
            OPFORGE_ABI_OK)
      << err;
  float x[2] = {5.f, 6.f}, y[2] = {-1.f, -1.f};
  const int64_t dims[1] = {2};
  OpforgeTensor tx{x, dims, 1, static_cast<int32_t>(DataType::kFloat32), 0, 0};
  OpforgeTensor ty{y, dims, 1, static_cast<int32_t>(DataType::kFloat32), 0, 0};
  DeviceErrorRecord rec{};
  OpforgeKernelArgs a{};
  a.tactic = 0;
  a.inputs = &tx;
  a.num_inputs = 1;
  a.outputs = &ty;
  a.num_outputs = 1;
  a.error = err;
  a.error_capacity = sizeof(err);
  a.error_record = &rec;  // beyond struct_size: an older engine's stack, never to be read
  a.struct_size = static_cast<uint32_t>(offsetof(OpforgeKernelArgs, error_record));
  EXPECT_FALSE(OPFORGE_KERNEL_ARGS_HAS(&a, error_record));
  ASSERT_EQ(op.run(instance, &a), OPFORGE_ABI_OK) << err;
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], 6.f);
  EXPECT_EQ(rec.flag, 0u);
  // The full struct: the record arrives.
  a.struct_size = sizeof(a);
  EXPECT_TRUE(OPFORGE_KERNEL_ARGS_HAS(&a, error_record));
  ASSERT_EQ(op.run(instance, &a), OPFORGE_ABI_OK) << err;
  EXPECT_EQ(y[0], 1.f);
  EXPECT_EQ(rec.flag, 1u);
  EXPECT_EQ(rec.value, 5);
  op.destroy(instance);
  // The library stays loaded (the registry above may hold it too); dlclose is not needed here.
}
