// silu_mul_test LIBRARY ONNX — ext::silu_mul through the installed engine: each data type on the
// CPU (and on the GPU when there is one, which times and picks the CUDA tactic), against a direct
// computation in double, with poisoned outputs; then the ONNX file. Exit 0 on success.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "opforge/builder.h"
#include "opforge/device.h"
#include "opforge/network.h"
#include "opforge/runtime.h"

using namespace opforge;

namespace {
int failures = 0;

void fail(const std::string& what) {
  std::printf("FAIL: %s\n", what.c_str());
  ++failures;
}

uint16_t encode(DataType t, float v) {
  return t == DataType::kFloat16 ? floatToHalf(v) : floatToBf16(v);
}
double decode(DataType t, const uint8_t* p, int64_t i) {
  if (t == DataType::kFloat32) return reinterpret_cast<const float*>(p)[i];
  const uint16_t h = reinterpret_cast<const uint16_t*>(p)[i];
  return t == DataType::kFloat16 ? halfToFloat(h) : bf16ToFloat(h);
}

// Random values in [-4, 4] stored as `t`; `ref` gets the stored values as doubles.
std::vector<uint8_t> randomInput(DataType t, int64_t n, std::mt19937& rng,
                                 std::vector<double>& ref) {
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  std::vector<uint8_t> bytes(n * dtypeSize(t));
  for (int64_t i = 0; i < n; ++i) {
    const float v = u(rng);
    if (t == DataType::kFloat32)
      reinterpret_cast<float*>(bytes.data())[i] = v;
    else
      reinterpret_cast<uint16_t*>(bytes.data())[i] = encode(t, v);
    ref.push_back(decode(t, bytes.data(), i));
  }
  return bytes;
}

double tolerance(DataType t) {
  return t == DataType::kFloat32 ? 1e-5 : t == DataType::kFloat16 ? 2e-3 : 2e-2;
}

template <typename T>
T must(Result<T> r, const char* what) {
  if (!r) {
    std::printf("FAIL: %s: %s\n", what, r.status().message().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}
void must(const Status& st, const char* what) {
  if (!st) {
    std::printf("FAIL: %s: %s\n", what, st.message().c_str());
    std::exit(1);
  }
}

// Builds and runs a one-node network for (backend, dtype, dims) and checks it.
void check(std::shared_ptr<Registry> reg, Backend backend, DataType t,
           const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::mt19937 rng(static_cast<unsigned>(n) * 31 + static_cast<unsigned>(t));
  std::vector<double> ra, rb;
  const auto a = randomInput(t, n, rng, ra), b = randomInput(t, n, rng, rb);
  NetworkDefinition net(reg);
  auto x = must(net.addInput("a", t, dims), "addInput");
  auto g = must(net.addInput("b", t, dims), "addInput");
  auto y = must(net.addOp("ext::silu_mul", {x, g}, {}, "silu_mul"), "addOp");
  must(net.markOutput(y[0], "y"), "markOutput");
  BuilderConfig cfg;
  cfg.backend = backend;
  Builder builder(reg);
  auto plan = must(builder.buildSerializedNetwork(net, cfg), "build");
  auto engine = must(Engine::loadMemory(std::move(plan), "silu_mul", reg), "load");
  auto ctx = must(engine->createExecutionContext(), "context");
  must(ctx->setInput("a", a.data(), a.size()), "setInput a");
  must(ctx->setInput("b", b.data(), b.size()), "setInput b");
  must(ctx->execute(), "execute");
  Tensor out = must(ctx->output("y"), "output");
  const std::string name = std::string(backend == Backend::kCuda ? "cuda " : "cpu ") +
                           dtypeName(t) + " " + std::to_string(n) + " elements";
  if (out.numel() != n) return fail(name + ": wrong output size");
  const auto* p = static_cast<const uint8_t*>(out.data);
  for (int64_t i = 0; i < n; ++i) {
    const double want = ra[i] / (1 + std::exp(-ra[i])) * rb[i], got = decode(t, p, i);
    if (!(std::fabs(got - want) <= tolerance(t) * (1 + std::fabs(want))))
      return fail(name + ": element " + std::to_string(i) + " is " + std::to_string(got) +
                  ", want " + std::to_string(want));
  }
  std::printf("ok   %s\n", name.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LIBRARY ONNX\n", argv[0]);
    return 2;
  }
  auto reg = Registry::create();
  must(reg->loadLibrary(argv[1]), "loadLibrary");
  std::vector<Backend> backends = {Backend::kCpu};
  if (cudaDeviceInfo()) backends.push_back(Backend::kCuda);
  for (Backend be : backends)
    for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16})
      for (const auto& dims : std::vector<std::vector<int64_t>>{{1}, {3, 5}, {2, 7, 129}})
        check(reg, be, t, dims);

  // Mismatched shapes are refused when the network is built.
  NetworkDefinition bad(reg);
  auto x = must(bad.addInput("a", DataType::kFloat32, {2, 3}), "addInput");
  auto g = must(bad.addInput("b", DataType::kFloat32, {2, 4}), "addInput");
  auto r = bad.addOp("ext::silu_mul", {x, g}, {}, "bad");
  if (r) {
    must(bad.markOutput((*r)[0], "y"), "markOutput");
    Builder builder(reg);
    auto plan = builder.buildSerializedNetwork(bad, BuilderConfig{});
    if (plan)
      fail("a [2,3] with b [2,4] was accepted");
    else
      std::printf("ok   refused: %s\n", plan.status().message().c_str());
  }

  // The ONNX file imports (its nodes name the op by domain/plugin_namespace "ext").
  auto net = importOnnx(argv[2], reg);
  if (!net) fail("import " + std::string(argv[2]) + ": " + net.status().message());
  std::printf("%s\n", failures ? "FAILED" : "PASS");
  return failures ? 1 : 0;
}
