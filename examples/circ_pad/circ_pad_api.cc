// The plugin guide's circular padding example through the C++ network API (the seed's
// network.add_input / network.add_plugin), checked against a direct computation and against the
// same network imported from examples/circ_pad/circ_pad.onnx.
#include "../common/example_util.h"

int main(int argc, char** argv) {
  using namespace opforge;
  const auto args = example::parse(argc, argv, "circ_pad/circ_pad.onnx");
  auto registry = Registry::create();
  example::must(registry->loadLibrary(args.plugins));

  const int64_t N = 2, C = 3, H = 32, W = 32;
  const std::vector<int32_t> pads = {1, 1, 2, 2};  // last dim +1/+1, second-to-last +2/+2
  NetworkDefinition net(registry);
  auto x = example::must(net.addInput("x", DataType::kFloat32, {N, C, H, W}));
  auto y = example::must(
      net.addOp("example::circ_pad_plugin", {x}, {{"pads", pads}}, "circ_pad_plugin"));
  example::must(net.markOutput(y[0], "y"));
  std::printf("network: x %s -> circ_pad_plugin(pads=[1,1,2,2]) -> y %s\n", net.shapeOf(x).c_str(),
              net.shapeOf(y[0]).c_str());

  const auto input = example::randomFloats(N * C * H * W, 7);
  auto api = example::run(net, {{"x", input}}, {"y"});

  // Direct computation: y[n,c,i,j] = x[n,c,(i-2) mod H,(j-1) mod W].
  const int64_t Ho = H + 4, Wo = W + 2;
  const auto* got = reinterpret_cast<const float*>(api[0].data.data());
  int64_t bad = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          int64_t si = ((i - 2) % H + H) % H, sj = ((j - 1) % W + W) % W;
          float want = input[((n * C + c) * H + si) * W + sj];
          bad += got[((n * C + c) * Ho + i) * Wo + j] != want;
        }
  if (api[0].desc.dims != std::vector<int64_t>{N, C, Ho, Wo} || bad) {
    std::printf("FAIL: %lld elements differ from the direct computation\n",
                static_cast<long long>(bad));
    return 1;
  }
  // The ONNX file gives the same network.
  NetworkDefinition onnx = example::must(importOnnx(args.onnx, registry));
  // The file's batch is dynamic: build it for N.
  Builder b(registry);
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {N, C, H, W}, {N, C, H, W}, {N, C, H, W}));
  auto plan = example::must(b.buildSerializedNetwork(onnx, cfg));
  auto engine = example::must(Engine::loadMemory(std::move(plan), args.onnx, registry));
  auto ctx = example::must(engine->createExecutionContext());
  example::must(ctx->setInputShape("x", {N, C, H, W}));
  example::must(ctx->setInput("x", input.data(), input.size() * sizeof(float)));
  example::must(ctx->execute());
  Tensor t = example::must(ctx->output("y"));
  if (t.bytes() != api[0].data.size() || std::memcmp(t.data, api[0].data.data(), t.bytes()) != 0) {
    std::printf("FAIL: the ONNX model's output differs from the API network's\n");
    return 1;
  }
  std::printf("PASS: y %s matches the direct computation and %s\n", describe(api[0].desc).c_str(),
              args.onnx.c_str());
  return 0;
}
