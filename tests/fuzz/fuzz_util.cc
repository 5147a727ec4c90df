#include "fuzz_util.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "opforge/builder.h"

namespace opforge::fuzz {

std::shared_ptr<Registry> registry() {
  static std::shared_ptr<Registry> reg = [] {
    auto r = Registry::global();
    if (Status st = r->loadLibrary(OPFORGE_FUZZ_OPS_LIBRARY); !st) {
      std::fprintf(stderr, "fuzz: cannot load %s: %s\n", OPFORGE_FUZZ_OPS_LIBRARY,
                   st.message().c_str());
      std::abort();
    }
    return r;
  }();
  return reg;
}

void expectMessage(const Status& st, const char* where) {
  if (!st && st.message().empty()) {
    std::fprintf(stderr, "fuzz: %s failed with an empty message\n", where);
    std::abort();
  }
}

void runOnCpu(const std::shared_ptr<Engine>& engine) {
  auto ctx = engine->createExecutionContext();
  if (!ctx) return expectMessage(ctx.status(), "createExecutionContext");
  (*ctx)->setMemoryLimit(kMaxRunBytes);
  std::vector<uint8_t> data;
  for (const IOTensorInfo& io : engine->ioTensors()) {
    if (!io.is_input) continue;
    std::vector<int64_t> dims = io.dims;
    for (int64_t d : dims) {
      if (d >= 0) continue;
      auto ps = engine->profileShapes(0, io.name);
      if (!ps) return expectMessage(ps.status(), "profileShapes");
      if (ps->size() < 2) return;
      dims = (*ps)[1];
      break;
    }
    Status st = (*ctx)->setInputShape(io.name, dims);
    if (!st) return expectMessage(st, "setInputShape");
    TensorDesc d{io.dtype, dims, io.format};
    const int64_t n = d.bytes();
    if (n < 0 || static_cast<uint64_t>(n) > kMaxInputBytes) return;
    data.resize(static_cast<size_t>(n));
    // A fixed pattern: small integers in every byte (valid indices for most gathers, finite
    // floats), the same for every run so that a finding reproduces.
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 7) % 5);
    st = (*ctx)->setInput(io.name, data.data(), data.size());
    if (!st) return expectMessage(st, "setInput");
  }
  Status st = (*ctx)->execute();
  if (!st) return expectMessage(st, "execute");
  for (const IOTensorInfo& io : engine->ioTensors()) {
    if (io.is_input) continue;
    auto t = (*ctx)->output(io.name);
    if (!t) return expectMessage(t.status(), "output");
  }
}

void buildAndRun(const NetworkDefinition& net) {
  BuilderConfig cfg;
  OptimizationProfile prof;
  for (int id : net.graph().inputs) {
    const graph::Value& v = net.graph().values[id];
    bool dynamic = false;
    std::vector<int64_t> dims;
    for (const DimExpr& d : v.dims) {
      dynamic |= !d.isConst();
      dims.push_back(d.isConst() ? d.constValue() : 1);
    }
    TensorDesc desc{v.dtype, dims, Format::kLinear};
    const int64_t n = desc.bytes();
    if (n < 0 || static_cast<uint64_t>(n) > kMaxInputBytes) return;
    if (dynamic) prof.inputs[v.name] = ShapeRange{dims, dims, dims};
  }
  if (!prof.inputs.empty()) cfg.profiles.push_back(prof);
  cfg.backend = Backend::kCpu;
  Builder builder(net.registry());
  auto plan = builder.buildSerializedNetwork(net, cfg);
  if (!plan) return expectMessage(plan.status(), "buildSerializedNetwork");
  auto engine = Engine::loadMemory(std::move(*plan), "fuzz.plan", net.registry());
  if (!engine) {
    // A plan the builder wrote must load.
    std::fprintf(stderr, "fuzz: a built plan does not load: %s\n",
                 engine.status().message().c_str());
    std::abort();
  }
  runOnCpu(*engine);
}

void importBuildAndRun(const uint8_t* data, size_t size) {
  auto net = importOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx",
                             "", registry());
  if (!net) {
    expectMessage(net.status(), "importOnnxBytes");
    return;
  }
  buildAndRun(*net);
}

}  // namespace opforge::fuzz
