// opforge-onnx-run — runs a plan on inputs from .npy files, saves the outputs and times the runs
// (the differential tests and the CPU benchmark drive it).
//
//   opforge-onnx-run PLAN --inputs=name:file.npy[,name:file.npy...] [--outputs=DIR]
//                    [--iterations=N] [--warmup=N] [--profile]
//
// Every input's shape is set from its file before any data is copied (inputs of a plan with
// dynamic dimensions all need shapes first). Prints "latency_ms median=... min=... mean=..."
// over the timed runs. Outputs are written as DIR/<name>.npy. Errors name the file or tensor.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "opforge/runtime.h"
#include "tools/opforge/npy.h"

using namespace opforge;

namespace {
[[noreturn]] void fail(const Status& st) {
  std::cerr << "opforge-onnx-run: error: " << st.message() << "\n";
  std::exit(1);
}
template <typename T>
T orFail(Result<T> r) {
  if (!r) fail(r.status());
  return std::move(r).value();
}
}  // namespace

int main(int argc, char** argv) {
  std::string plan, inputs, outputs;
  int iterations = 1, warmup = 0;
  bool profile = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* p) { return a.substr(std::strlen(p)); };
    if (a.rfind("--inputs=", 0) == 0)
      inputs = val("--inputs=");
    else if (a.rfind("--outputs=", 0) == 0)
      outputs = val("--outputs=");
    else if (a.rfind("--iterations=", 0) == 0)
      iterations = std::max(1, std::atoi(val("--iterations=").c_str()));
    else if (a.rfind("--warmup=", 0) == 0)
      warmup = std::max(0, std::atoi(val("--warmup=").c_str()));
    else if (a == "--profile")
      profile = true;
    else if (!a.empty() && a[0] != '-')
      plan = a;
    else {
      std::cerr << "usage: opforge-onnx-run PLAN --inputs=name:file.npy[,...] [--outputs=DIR] "
                   "[--iterations=N] [--warmup=N]\n";
      return 2;
    }
  }
  if (plan.empty()) fail(Status::invalid("no plan file given"));
  auto engine = orFail(Engine::loadFile(plan));
  auto ctx = orFail(engine->createExecutionContext());
  std::map<std::string, TensorValue> data;
  std::stringstream ss(inputs);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t c = item.find(':');
    if (c == std::string::npos || c == 0)
      fail(Status::invalid("--inputs: '" + item + "' is not NAME:FILE"));
    data[item.substr(0, c)] = orFail(npy::read(item.substr(c + 1)));
  }
  for (const auto& io : engine->ioTensors())
    if (io.is_input && !data.count(io.name))
      fail(Status::invalid("no data for input '" + io.name + "' (--inputs)"));
  for (const auto& [name, v] : data)
    if (Status st = ctx->setInputShape(name, v.desc.dims); !st) fail(st);
  for (const auto& [name, v] : data)
    if (Status st = ctx->setInput(name, v.data.data(), v.data.size()); !st) fail(st);
  for (int i = 0; i < warmup; ++i)
    if (Status st = ctx->execute(); !st) fail(st);
  std::vector<double> ms;
  std::map<std::string, double> layer_ms;
  std::vector<std::string> layer_order;
  ctx->setProfiling(profile);
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (Status st = ctx->execute(); !st) fail(st);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    for (const auto& l : ctx->layerTimes()) {
      if (!layer_ms.count(l.name)) layer_order.push_back(l.name);
      layer_ms[l.name] += l.ms / iterations;
    }
  }
  for (const auto& n : layer_order) std::cout << "layer " << n << ": " << layer_ms[n] << " ms\n";
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double v : ms) mean += v / static_cast<double>(ms.size());
  const double median = sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::cout << "latency_ms median=" << median << " min=" << sorted.front() << " mean=" << mean
            << " iterations=" << ms.size() << "\n";
  if (!outputs.empty())
    for (const auto& io : engine->ioTensors()) {
      if (io.is_input) continue;
      Tensor t = orFail(ctx->output(io.name));
      if (Status st = npy::write(outputs + "/" + io.name + ".npy", t.desc, t.data); !st) fail(st);
      std::cout << "output '" << io.name << "': " << describe(t.desc) << "\n";
    }
  return 0;
}
