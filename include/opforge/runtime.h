// opforge/runtime.h — loading plans and running them.
//
// Engine is a deserialized plan: immutable, shareable between threads. It checks the file
// (magic, size, checksum, format version) and that every op it names is registered; a missing
// op gives one message naming the op, the node, the library the plan was built with, and the
// --plugins flag. An ExecutionContext holds the memory of one inference; several contexts may
// run one engine at the same time (one context per thread).
//
// CUDA plans: weights are uploaded to the GPU once per engine; each context owns a device arena
// (planned by liveness when shapes change), pinned host staging for inputs and outputs, and a
// stream. enqueue(stream) is asynchronous; execute() is enqueue on the context's stream plus a
// synchronize. For static shapes the context captures the network into a CUDA graph on its second
// run and replays it afterwards (setUseCudaGraph(false) turns that off); networks that need the
// host between layers (data-dependent sizes, CPU-fallback layers) run without a graph.
//
// Usage:
//   auto engine = opforge::Engine::loadFile("model.plan", registry);   //
//   Result<shared_ptr<Engine>> auto ctx = (*engine)->createExecutionContext();
//   (*ctx)->setInputShape("x", {4, 3, 8, 8});
//   (*ctx)->setInput("x", data, bytes);          // host memory, copied
//   (*ctx)->execute();
//   opforge::Tensor y = *(*ctx)->output("y");    // valid until the next execute()
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "opforge/op.h"
#include "opforge/registry.h"
#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge {

namespace plan {
struct Plan;
}

struct IOTensorInfo {
  std::string name;
  bool is_input = false;
  DataType dtype = DataType::kFloat32;
  Format format = Format::kLinear;
  std::string shape;          // symbolic, e.g. "[x.0, 3, 10, 12]"
  std::vector<int64_t> dims;  // -1 where dynamic or data-dependent
};

struct LayerInfo {
  std::string name, op, combo, tactic, library;
  // The op's layer kind (OpSchema::layerKind: "conv", "gemm", "reformat", "cast", ...); empty
  // from Engine::planLayers, which reads a plan without its op libraries.
  std::string kind;
  std::vector<std::string> inputs, outputs;  // "name FP32[x.0, 3, 8, 8]"
  uint64_t workspace = 0;
  double build_time_ms = -1.0;
  // A layer of an If branch runs only when these hold: "'cond' is true", one per nesting level
  // (empty: it always runs).
  std::vector<std::string> runs_when;
};

class ExecutionContext;

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  ~Engine();
  static Result<std::shared_ptr<Engine>> loadFile(
      const std::string& path, std::shared_ptr<Registry> registry = Registry::global());
  static Result<std::shared_ptr<Engine>> loadMemory(
      std::vector<uint8_t> bytes, const std::string& name = "<memory>",
      std::shared_ptr<Registry> registry = Registry::global());

  const std::vector<IOTensorInfo>& ioTensors() const { return io_; }
  int numProfiles() const;
  // min/opt/max of one input in one profile (empty vectors for a static input).
  Result<std::vector<std::vector<int64_t>>> profileShapes(int profile,
                                                          const std::string& input) const;
  std::vector<LayerInfo> layers() const;
  // The layers of a plan in memory, read without resolving their ops (the file is checked as
  // loadMemory checks it): which op libraries, or Python modules ("python:<module>"), a loader
  // must make available first.
  static Result<std::vector<LayerInfo>> planLayers(const std::vector<uint8_t>& bytes,
                                                   const std::string& name = "<memory>");
  Backend backend() const;
  // "NVIDIA H200, sm_90, CUDA 13.0" for CUDA plans (as built), "cpu" otherwise.
  std::string deviceDescription() const;
  // A human-readable report: layers, ops, shapes, tactics, memory (what `opforge inspect` prints).
  std::string inspect() const;
  uint64_t weightBytes() const;
  const std::string& name() const { return name_; }

  Result<std::unique_ptr<ExecutionContext>> createExecutionContext() const;

  struct Impl;  // internal

 private:
  Engine();
  static std::vector<LayerInfo> layersOf(const plan::Plan& p);
  static Result<std::shared_ptr<Engine>> finishLoad(std::shared_ptr<Engine> e, const uint8_t* data,
                                                    size_t size);
  std::unique_ptr<Impl> impl_;
  std::vector<IOTensorInfo> io_;
  std::string name_;
};

struct LayerTime {
  std::string name;
  double ms = 0.0;        // GPU time (CUDA events) or host time (CPU plans)
  double start_ms = 0.0;  // offset from the start of the run (for traces)
};

// Times of the last run (CUDA plans: CUDA events; CPU plans: host clock, copies are zero).
struct RunTimes {
  double h2d_ms = 0, compute_ms = 0, d2h_ms = 0;
  bool cuda_graph = false;  // the compute part was a CUDA graph replay
};

class ExecutionContext {
 public:
  ~ExecutionContext();
  Status setOptimizationProfile(int index);
  int optimizationProfile() const;
  // Sets a dynamic input's shape; errors name the input, the dimension and the profile range.
  Status setInputShape(const std::string& name, const std::vector<int64_t>& dims);
  // Copies `bytes` of host data (the input's dtype, in its format's memory order) into the
  // context. The size must match the input's current shape.
  Status setInput(const std::string& name, const void* data, size_t bytes);
  // Runs the network; outputs stay valid until the next execute() or setInputShape().
  Status execute();
  // CUDA plans: issues the run on `stream` (a cudaStream_t; nullptr = the context's own stream)
  // and returns without waiting. Call synchronize() (or synchronize the stream) before reading
  // outputs. Networks with data-dependent sizes synchronize internally where they must.
  // CPU plans: runs synchronously.
  Status enqueue(void* stream = nullptr);
  Status synchronize();
  // Binds a network input or output to caller-owned memory of the plan's device — device memory
  // for CUDA plans, host memory for CPU plans — so no staging copy is made; nullptr unbinds. The
  // memory must hold the tensor at its current (or upper-bound) shape and outlive the runs that
  // use it; output() refuses a bound tensor (read it where it was bound).
  Status setTensorAddress(const std::string& name, void* device_ptr);
  // An output where the layers wrote it, after the run: device memory (Device::kCuda) for CUDA
  // plans, the context's host memory (Device::kCpu) for CPU plans.
  Result<Tensor> deviceOutput(const std::string& name) const;
  void setUseCudaGraph(bool on);
  // Fills activation memory with 0xFF bytes (NaN for floats) before every run, so that elements a
  // kernel fails to write show up (for tests; costs a memset).
  void setDebugPoison(bool on);
  const RunTimes& lastRunTimes() const;
  // A tensor's current shape (outputs with data-dependent sizes: the real shape after execute()).
  Result<std::vector<int64_t>> shape(const std::string& name) const;
  // An output (or any named tensor kept to the end) after execute(): host memory owned by the
  // context.
  Result<Tensor> output(const std::string& name) const;
  // Per-layer times of the last execute() when profiling is on.
  void setProfiling(bool on);
  const std::vector<LayerTime>& layerTimes() const;
  // Bytes of activation memory the context holds now.
  uint64_t activationBytes() const;
  // Caps the memory this context allocates for a set of input shapes: activations, workspace
  // and the host copies of inputs and outputs together (0, the default: no cap beyond what the
  // device can allocate). Shapes that need more are refused before anything is allocated: the
  // next setInput(), shape() or execute() fails with an error naming the bytes needed and the
  // cap. For services and fuzzers that must not take more than a budget.
  void setMemoryLimit(uint64_t bytes);

  struct Impl;

 private:
  friend class Engine;
  ExecutionContext();
  std::unique_ptr<Impl> impl_;
};

}  // namespace opforge
