// TensorRT's in-place add sample (an output aliasing its input) chained twice, delta 2 then
// delta 4, through the C++ network API; checked against x + 6 and against
// examples/inplace_add/inplace_add.onnx.
#include "../common/example_util.h"

int main(int argc, char** argv) {
  using namespace opforge;
  const auto args = example::parse(argc, argv, "inplace_add/inplace_add.onnx");
  auto registry = Registry::create();
  example::must(registry->loadLibrary(args.plugins));

  const std::vector<int64_t> dims = {2, 4, 8, 8};
  NetworkDefinition net(registry);
  auto x = example::must(net.addInput("x", DataType::kFloat32, dims));
  auto a = example::must(
      net.addOp("sample::elemwise_add_plugin_", {x}, {{"delta", int64_t{2}}}, "add_2"));
  auto b = example::must(
      net.addOp("sample::elemwise_add_plugin_", {a[0]}, {{"delta", int64_t{4}}}, "add_4"));
  example::must(net.markOutput(b[0], "y"));

  const auto input = example::randomFloats(2 * 4 * 8 * 8, 3);
  auto api = example::run(net, {{"x", input}}, {"y"});
  const auto* got = reinterpret_cast<const float*>(api[0].data.data());
  for (size_t i = 0; i < input.size(); ++i)
    if (got[i] != input[i] + 2.f + 4.f) {
      std::printf("FAIL: y[%zu] = %g, expected %g\n", i, got[i], input[i] + 6.f);
      return 1;
    }
  NetworkDefinition onnx = example::must(importOnnx(args.onnx, registry));
  auto from_file = example::run(onnx, {{"x", input}}, {"y"});
  if (!example::sameBytes(from_file[0], api[0])) {
    std::printf("FAIL: the ONNX model's output differs from the API network's\n");
    return 1;
  }
  std::printf("PASS: y = x + 2 + 4 for all %zu elements, in place, from the API and from %s\n",
              input.size(), args.onnx.c_str());
  return 0;
}
