// Launch overhead per layer, with and without CUDA graphs: a chain of K tiny layers (the in-place
// add plugin on 256 floats, so the kernels themselves cost next to nothing) built into a CUDA
// plan; the host enqueue time and the GPU time per layer are the engine's overhead.
//
//   bench_launch_overhead [--plugins=build/lib/libopforge_ops.so] [--iterations=2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "opforge/builder.h"
#include "opforge/device.h"
#include "opforge/network.h"
#include "opforge/runtime.h"

using namespace opforge;

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
template <typename T>
T must(Result<T> r) {
  if (!r) {
    std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}
void must(const Status& s) {
  if (!s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    std::exit(1);
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string plugins = "build/lib/libopforge_ops.so";
  int iterations = 2000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--plugins=", 0) == 0)
      plugins = a.substr(10);
    else if (a.rfind("--iterations=", 0) == 0)
      iterations = std::stoi(a.substr(13));
  }
  auto dev = opforge::cudaDeviceInfo();
  if (!dev) {
    std::fprintf(stderr, "no GPU: %s\n", dev.status().message().c_str());
    return 1;
  }
  auto reg = Registry::create();
  must(reg->loadLibrary(plugins));
  std::printf("# Launch overhead per layer on %s (median of %d runs)\n\n", dev->describe().c_str(),
              iterations);
  std::printf(
      "| layers | CUDA graph | GPU time / run (ms) | GPU time / layer (us) | enqueue / run (us) | "
      "enqueue / layer (us) |\n");
  std::printf("|---:|---|---:|---:|---:|---:|\n");
  for (int k : {1, 10, 100}) {
    NetworkDefinition net(reg);
    auto t = must(net.addInput("x", DataType::kFloat32, {256}));
    for (int i = 0; i < k; ++i)
      t = must(net.addOp("sample::elemwise_add_plugin_", {t}, {{"delta", int64_t{1}}}))[0];
    must(net.markOutput(t, "y"));
    BuilderConfig cfg;
    cfg.backend = Backend::kCuda;
    auto engine =
        must(Engine::loadMemory(must(Builder(reg).buildSerializedNetwork(net, cfg)), "chain", reg));
    for (bool graph : {false, true}) {
      auto ctx = must(engine->createExecutionContext());
      ctx->setUseCudaGraph(graph);
      std::vector<float> in(256, 1.f);
      must(ctx->setInput("x", in.data(), in.size() * 4));
      for (int w = 0; w < 50; ++w) must(ctx->execute());
      std::vector<double> gpu, enq;
      for (int i = 0; i < iterations; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        must(ctx->enqueue(nullptr));
        auto t1 = std::chrono::steady_clock::now();
        must(ctx->synchronize());
        gpu.push_back(ctx->lastRunTimes().compute_ms);
        enq.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
      Tensor y = must(ctx->output("y"));
      if (y.as<float>()[0] != 1.f + k) {
        std::fprintf(stderr, "wrong result: %g, expected %d\n", y.as<float>()[0], 1 + k);
        return 1;
      }
      // The chain's layers (k adds plus the copy that keeps the input intact).
      const double layers = k + 1;
      std::printf("| %d | %s | %.4f | %.2f | %.1f | %.2f |\n", k, graph ? "yes" : "no", median(gpu),
                  1000.0 * median(gpu) / layers, median(enq), median(enq) / layers);
    }
  }
  return 0;
}
