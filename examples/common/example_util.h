// example_util.h — what the example programs share: finding the op library and models, random
// inputs, building and running a network, comparing results.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/runtime.h"

namespace example {

inline std::string exeDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.find_last_of('/'));
}

// argv: [--plugins=LIB] [--onnx=MODEL]; defaults: the build tree's library and the shipped model.
struct Args {
  std::string plugins, onnx;
};
inline Args parse(int argc, char** argv, const std::string& default_model) {
  Args a{exeDir() + "/../lib/libopforge_ops.so",
         std::string(OPFORGE_EXAMPLES_DIR) + "/" + default_model};
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--plugins=", 0) == 0)
      a.plugins = s.substr(10);
    else if (s.rfind("--onnx=", 0) == 0)
      a.onnx = s.substr(7);
    else {
      std::fprintf(stderr, "usage: %s [--plugins=LIB] [--onnx=MODEL]\n", argv[0]);
      std::exit(1);
    }
  }
  return a;
}

[[noreturn]] inline void die(const opforge::Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  std::exit(1);
}
template <typename T>
T must(opforge::Result<T> r) {
  if (!r) die(r.status());
  return std::move(r).value();
}
inline void must(const opforge::Status& st) {
  if (!st) die(st);
}

// Builds `net` (static shapes), runs it on `inputs` and returns the named outputs.
inline std::vector<opforge::TensorValue> run(
    const opforge::NetworkDefinition& net,
    const std::vector<std::pair<std::string, std::vector<float>>>& inputs,
    const std::vector<std::string>& outputs) {
  opforge::Builder builder(net.registry());
  auto plan = must(builder.buildSerializedNetwork(net, opforge::BuilderConfig{}));
  auto engine = must(opforge::Engine::loadMemory(std::move(plan), net.source(), net.registry()));
  auto ctx = must(engine->createExecutionContext());
  for (const auto& [name, data] : inputs)
    must(ctx->setInput(name, data.data(), data.size() * sizeof(float)));
  must(ctx->execute());
  std::vector<opforge::TensorValue> out;
  for (const auto& name : outputs) {
    opforge::Tensor t = must(ctx->output(name));
    opforge::TensorValue v;
    v.desc = t.desc;
    v.data.assign(static_cast<const uint8_t*>(t.data),
                  static_cast<const uint8_t*>(t.data) + t.bytes());
    out.push_back(std::move(v));
  }
  return out;
}

inline std::vector<float> randomFloats(size_t n, unsigned seed, double zero_fraction = 0.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::uniform_real_distribution<double> z(0.0, 1.0);
  std::vector<float> v(n);
  for (auto& x : v) x = z(rng) < zero_fraction ? 0.f : u(rng);
  return v;
}

inline bool sameBytes(const opforge::TensorValue& a, const opforge::TensorValue& b) {
  return a.desc.dims == b.desc.dims && a.desc.dtype == b.desc.dtype && a.data == b.data;
}

}  // namespace example
