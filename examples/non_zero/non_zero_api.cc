// The plugin guide's non-zero example (a data-dependent output shape) through the C++ network
// API, checked against a direct scan and against examples/non_zero/non_zero.onnx.
#include "../common/example_util.h"

int main(int argc, char** argv) {
  using namespace opforge;
  const auto args = example::parse(argc, argv, "non_zero/non_zero.onnx");
  auto registry = Registry::create();
  example::must(registry->loadLibrary(args.plugins));

  const int64_t M = 8, N = 16;
  NetworkDefinition net(registry);
  auto x = example::must(net.addInput("x", DataType::kFloat32, {M, N}));
  auto outs = example::must(net.addOp("example::non_zero_plugin", {x}, {}, "non_zero_plugin"));
  example::must(net.markOutput(outs[0], "indices"));
  example::must(net.markOutput(outs[1], "count"));
  std::printf("network: x %s -> non_zero_plugin -> indices %s, count %s\n", net.shapeOf(x).c_str(),
              net.shapeOf(outs[0]).c_str(), net.shapeOf(outs[1]).c_str());

  const auto input = example::randomFloats(M * N, 11, 0.5);  // about half zeros
  auto api = example::run(net, {{"x", input}}, {"indices", "count"});
  std::vector<int32_t> want;
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < N; ++c)
      if (input[r * N + c] != 0.f) {
        want.push_back(static_cast<int32_t>(r));
        want.push_back(static_cast<int32_t>(c));
      }
  const int32_t k = *reinterpret_cast<const int32_t*>(api[1].data.data());
  const auto* got = reinterpret_cast<const int32_t*>(api[0].data.data());
  bool ok = k == static_cast<int32_t>(want.size() / 2) &&
            api[0].desc.dims == std::vector<int64_t>{k, 2} &&
            std::equal(want.begin(), want.end(), got);
  if (!ok) {
    std::printf("FAIL: count %d (expected %zu) or indices differ\n", k, want.size() / 2);
    return 1;
  }
  NetworkDefinition onnx = example::must(importOnnx(args.onnx, registry));
  auto from_file = example::run(onnx, {{"x", input}}, {"indices", "count"});
  if (!example::sameBytes(from_file[0], api[0]) || !example::sameBytes(from_file[1], api[1])) {
    std::printf("FAIL: the ONNX model's outputs differ from the API network's\n");
    return 1;
  }
  std::printf("PASS: %d of %lld elements are non-zero; indices %s match the direct scan and %s\n",
              k, static_cast<long long>(M * N), describe(api[0].desc).c_str(), args.onnx.c_str());
  return 0;
}
