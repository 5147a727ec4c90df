// runtime_impl.h — what the runtime's files share (internal): the engine's and the execution
// context's state, host and device buffers. engine.cc loads and checks plans, context.cc sets
// shapes and plans memory, execute.cc runs the layers.
#pragma once

#include "opforge/runtime.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "../common/checked.h"
#include "../device/device.h"
#include "../plan/plan.h"
#include "../shapes/evaluator.h"
#include "memory_plan.h"

namespace opforge {
namespace rt {

inline constexpr size_t kArenaAlign = 256;

inline size_t alignUp(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

class AlignedBuffer {
 public:
  ~AlignedBuffer() { std::free(p_); }
  bool reserve(size_t n) {
    if (n <= cap_ && p_) return true;
    void* q = nullptr;
    if (::posix_memalign(&q, kArenaAlign, std::max<size_t>(n, 1)) != 0) return false;
    std::free(p_);
    p_ = static_cast<uint8_t*>(q);
    cap_ = n;
    return true;
  }
  uint8_t* data() const { return p_; }

 private:
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

// Device memory (or pinned host memory) that grows on demand.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }
  Status reserve(rt::DeviceApi* dev, size_t n, bool pinned_host) {
    if (n <= cap_ && (p_ || n == 0)) return Status::ok();
    release();
    dev_ = dev;
    pinned_ = pinned_host;
    Status st = pinned_host ? dev->mallocHost(&p_, n) : dev->malloc(&p_, n);
    if (!st) return st;
    cap_ = n;
    return Status::ok();
  }
  void release() {
    if (p_ && dev_) pinned_ ? dev_->freeHost(p_) : dev_->free(p_);
    p_ = nullptr;
    cap_ = 0;
  }
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }
  size_t capacity() const { return cap_; }

 private:
  rt::DeviceApi* dev_ = nullptr;
  void* p_ = nullptr;
  size_t cap_ = 0;
  bool pinned_ = false;
};

inline std::string opKey(const plan::Node& n) {
  return n.ns.empty() ? n.op : n.ns + "::" + n.op;
}

// A plan node's outputs checked against its op's shape rule, re-run on the dims dims_of gives
// for each tensor: the plan's symbolic dims when a plan is loaded (engine.cc), the concrete dims
// of a context's input shapes when it plans memory (context.cc), where a tampered dimension that
// only a number reveals shows up before any kernel reads past a buffer. Skipped (ok) where the
// rule cannot run: a dropped shape input, or value inputs the plan does not hold and the rule
// needs. Errors: kCorrupt, "<where>: output 0 ('y') is FLOAT[2,3]; the op's shape rule gives ...
// <hint>".
Status checkShapeRule(const std::string& where, const std::string& hint, const plan::Plan& p,
                      const uint8_t* weights, const plan::Node& n, const RegisteredOp& op,
                      const AttrMap& attrs,
                      const std::function<std::vector<DimExpr>(int32_t)>& dims_of);

}  // namespace rt

using rt::AlignedBuffer;
using rt::alignUp;
using rt::DeviceBuffer;
using rt::kArenaAlign;
using rt::opKey;

struct Engine::Impl {
  std::string name;
  std::shared_ptr<Registry> registry;
  void* map = nullptr;
  size_t map_size = 0;
  std::vector<uint8_t> owned;
  AlignedBuffer aligned_weights;  // the weights, when the bytes given were not aligned
  const uint8_t* weights = nullptr;
  size_t weights_size = 0;
  plan::Plan plan;
  std::vector<const RegisteredOp*> ops;
  std::vector<AttrMap> attrs;  // per node, as its op validated them
  // Input shapes (all inputs' dims, in plan order) at which every unguarded node's shape rule has
  // been re-run and held (context.cc, prepare): a service that alternates between a few shapes
  // pays for the check once per shape, in any of its contexts. At most kRuleCacheSize entries.
  static constexpr size_t kRuleCacheSize = 4096;
  mutable std::mutex rule_mu;
  mutable std::set<std::vector<int64_t>> rule_ok;
  std::vector<std::shared_ptr<KernelInstance>> instances;
  std::map<std::string, int> tensor_by_name;
  std::vector<bool> has_size_symbol;  // per tensor: dims depend on a data-dependent size
  bool cuda = false;
  // The device the layers run on: the GPU for CUDA plans, the host device for CPU plans.
  rt::DeviceApi* dev = nullptr;
  void* weights_dev = nullptr;    // the weights where the layers read them (`weights` on the host)
  bool weights_owned = false;     // weights_dev was allocated (and uploaded) for this engine
  bool host_sync_needed = false;  // data-dependent sizes, If branches or CPU-fallback layers

  ~Impl() {
    instances.clear();
    if (dev && weights_owned) dev->free(weights_dev);
    if (map) ::munmap(map, map_size);
  }
};

struct ExecutionContext::Impl {
  std::shared_ptr<const Engine> engine;
  const Engine::Impl* e = nullptr;
  rt::DeviceApi* dev = nullptr;  // the engine's device
  int profile = 0;
  std::map<int32_t, std::vector<int64_t>> input_shapes;  // tensor id -> dims
  std::set<int32_t> inputs_written;
  bool dirty = true;
  bool executed = false;
  shapes::Evaluator bindings{"at these input shapes"};  // input dims, then data-dependent sizes
  // Every data-dependent size at its upper bound (what buffers are sized for): the bound of a size
  // whose expression names a size of an If branch that did not run.
  shapes::Evaluator alloc_bindings{"at these input shapes"};
  std::map<int32_t, bool> guard_values;  // If conditions read on the host in this run
  // Sizes with no upper bound (opforge::ReadValues) at their opt value, as the builder saw them:
  // the fallback of a run-time upper bound that names a size of an If branch that did not run.
  shapes::Evaluator opt_bindings{"at these input shapes"};
  std::vector<std::vector<int64_t>> alloc_dims;  // per tensor, sizes used for allocation
  // Tensors whose dims depend on a size with no upper bound, and the storages that hold one: not
  // in the arena; each such storage is a buffer of its own, grown when its first tensor of a run
  // is made (the run knows its dims then).
  std::vector<bool> tensor_dynamic, storage_dynamic, node_dynamic;
  std::map<int32_t, std::unique_ptr<DeviceBuffer>> dynamic_storage;
  std::vector<bool> dynamic_made;  // per storage: a tensor of it was made in this run
  Status reserveDynamic(int32_t t, const std::vector<int64_t>& d, void* stream);
  std::vector<std::vector<int64_t>> dims;  // per tensor, real dims (after its producer ran)
  std::vector<size_t> storage_offset, storage_bytes;
  std::vector<bool> storage_is_input;
  size_t arena_bytes = 0;
  size_t workspace_bytes = 0;
  std::vector<size_t> node_workspace;
  DeviceBuffer arena, workspace;  // on the device
  AlignedBuffer host_workspace;   // CPU-fallback layers of a CUDA plan
  // Host copies of the inputs and outputs (pinned for a GPU). On a host-visible device an input's
  // staging buffer is its storage (stable across re-plans; layers never write inputs: the builder
  // copies before in-place ops), and outputs are read in place.
  std::map<int32_t, std::unique_ptr<DeviceBuffer>> staging;
  std::map<int32_t, void*> bound;   // caller-owned device memory
  std::set<int32_t> staged_inputs;  // inputs whose staging copy is current
  DeviceBuffer readback;            // pinned: size tensors, fallback I/O
  // Run-time errors found on the device (opforge/device_error.h): one pinned record per layer,
  // handed to its CUDA tactic, which the device writes; every CUDA layer's record is read after
  // synchronize (a graph replay writes the records its capture was given).
  DeviceBuffer error_records;
  DeviceErrorRecord* errorRecord(size_t k) {
    return reinterpret_cast<DeviceErrorRecord*>(error_records.data()) + k;
  }
  Status checkDeviceErrors();
  // Whether node k runs in this run: every guard's condition (read once per run) holds.
  Result<bool> guardsHold(size_t k, void* stream);
  std::vector<std::unique_ptr<AlignedBuffer>> fallback;  // host memory for CPU-fallback layers
  void* own_stream = nullptr;
  void* last_stream = nullptr;
  void* ev[4] = {nullptr, nullptr, nullptr, nullptr};
  std::vector<void*> layer_ev;
  bool use_graph = true;
  void* graph = nullptr;
  uint64_t graph_key = 0;
  int runs_since_shapes = 0;
  bool poison = false;
  uint64_t memory_limit = 0;  // setMemoryLimit; 0: none
  uint64_t fixed_bytes = 0;   // what prepare reserved (counted against memory_limit)
  bool profiling = false;
  bool sync_each_layer = std::getenv("OPFORGE_SYNC_EACH_LAYER") != nullptr;
  std::vector<LayerTime> times;
  RunTimes run_times;

  ~Impl() {
    if (dev) {  // the buffers above are released after this, by their own destructors
      if (graph) dev->graphDestroy(graph);
      for (void* x : ev) dev->eventDestroy(x);
      for (void* x : layer_ev) dev->eventDestroy(x);
      if (own_stream) dev->streamDestroy(own_stream);
    }
  }

  DimExpr::Lookup lookup() const { return bindings.lookup(); }
  // "node 'a' (ai.onnx::Add v1)", as the builder names nodes; made once (prepare), so the layer
  // loop builds no string unless a check fails.
  std::vector<std::string> labels;
  const std::string& label(size_t k) {
    if (labels.size() != plan().nodes.size()) {
      labels.clear();
      for (const auto& n : plan().nodes)
        labels.push_back("node '" + n.name + "' (" + opKey(n) + " v" + n.version + ")");
    }
    return labels[k];
  }
  const plan::Plan& plan() const { return e->plan; }
  Status prepare();
  void bindInputs();
  // Where a tensor lives for the layers, in the engine's device memory.
  void* tensorData(int32_t t) const {
    const auto& pt = plan().tensors[t];
    if (pt.kind == plan::TensorKind::kConstant)
      return static_cast<uint8_t*>(e->weights_dev) + pt.weight_offset;
    if (auto it = bound.find(t); it != bound.end()) return it->second;
    if (pt.kind == plan::TensorKind::kInput && dev->hostVisible()) return staging.at(t)->data();
    if (storage_dynamic[pt.storage]) return dynamic_storage.at(pt.storage)->data();
    return arena.data() + storage_offset[pt.storage];
  }
  TensorDesc desc(int32_t t, const std::vector<int64_t>& d) const {
    const auto& pt = plan().tensors[t];
    return TensorDesc{pt.dtype, d, pt.format};
  }
  Status runLayers(void* stream, bool capturing);
  // Node k's shape rule re-run on the concrete dims `at` (per tensor); rule_checked[k] is set.
  Status checkShapeRule(size_t k, const std::vector<std::vector<int64_t>>& at);
  std::vector<bool> rule_checked;  // per node, since the last prepare
  Status runFallback(size_t k, const std::vector<Tensor>& ins, const std::vector<Tensor>& outs,
                     void* stream);
  Status ensureStreamAndEvents();
  uint64_t graphKey() const;
};

}  // namespace opforge
