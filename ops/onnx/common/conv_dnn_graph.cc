// conv_dnn_graph.cc — the cuDNN half of conv_cuda.h that is host code: the per-thread cuDNN
// handle, and forward convolutions through cuDNN's graph (backend) API.
//
// The graph is conv -> [+ bias] -> [+ residual] -> [activation] with FP32 virtual tensors between
// the operations, over LINEAR (NCHW) or HWC (channels-last) tensors described by their strides.
// A problem's candidates are the engine configurations cuDNN lists for the fused graph and for the
// convolution alone (its epilogue then runs as the kernel in conv_cuda.cu), keeping only
// configurations that finalize into an execution plan and that opforge accepts: no runtime
// compilation (NVRTC at inference, seconds per plan), no non-deterministic reductions, and for
// FP32 data no tensor cores or down-converted inputs (TF32 would break FP32's tolerance) unless
// the tactic is a TF32 one (ConvArgs::tf32). Two lists per graph, as PyTorch's cudnn.benchmark
// searches: the heuristics' (mode A) and the fallback list's engines that mode A did not name —
// cuDNN's depthwise kernels (conv2d_c1_k1_nhwc, the sm90 depthwise tiling engines) are found only
// there on some problems. Order: mode A's first kFirstHeur of each graph in turn, then the fallback
// engines' first kFirstFallback of each graph in turn, then the rest in the same order, up to
// kDnnGraphTactics in all.
// Tactic `rank` is the rank-th candidate; the list depends only on the problem, the GPU and the
// cuDNN version, so the builder and the runtime agree on it (a plan run with another cuDNN version
// may get another engine of the same rank — still exact, maybe slower — or, when the list is
// shorter, a run-time error naming the engine). Plans are cached per thread (cuDNN binds a plan to
// a handle) and per problem; a thread's cache is emptied when it reaches kMaxProblems (many dynamic
// shapes), and rebuilt on demand.
#if defined(OPFORGE_WITH_CUDNN)

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conv_cuda.h"

namespace opforge::ops {

namespace {

Status dnnStatusOf(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return Status::ok();
  return Status::runtime(std::string("cuDNN ") + what + ": " + cudnnGetErrorString(s));
}

struct Handles {
  std::map<int, cudnnHandle_t> by_device;
  ~Handles() {
    for (auto& [dev, h] : by_device) (void)cudnnDestroy(h);
  }
};

// Owns one backend descriptor.
class Desc {
 public:
  Desc() = default;
  explicit Desc(cudnnBackendDescriptorType_t t) {
    ok_ = cudnnBackendCreateDescriptor(t, &d_) == CUDNN_STATUS_SUCCESS;
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(o.d_), ok_(o.ok_) { o.d_ = nullptr; }
  Desc& operator=(Desc&& o) noexcept {
    std::swap(d_, o.d_);
    std::swap(ok_, o.ok_);
    return *this;
  }
  ~Desc() {
    if (d_) (void)cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  bool ok() const { return ok_; }

  template <typename T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* v,
            int64_t n = 1) {
    if (ok_) ok_ = cudnnBackendSetAttribute(d_, name, type, n, v) == CUDNN_STATUS_SUCCESS;
    return *this;
  }
  Desc& set(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    ok_ = ok_ && other.ok();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o);
  }
  Desc& ints(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v) {
    return set(name, CUDNN_TYPE_INT64, v.data(), static_cast<int64_t>(v.size()));
  }
  bool finalize() {
    if (ok_) ok_ = cudnnBackendFinalize(d_) == CUDNN_STATUS_SUCCESS;
    return ok_;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  bool ok_ = false;
};

bool graphTypes(DataType t, cudnnDataType_t* data) {
  switch (t) {
    case DataType::kFloat32:
      *data = CUDNN_DATA_FLOAT;
      return true;
    case DataType::kFloat16:
      *data = CUDNN_DATA_HALF;
      return true;
    case DataType::kBFloat16:
      *data = CUDNN_DATA_BFLOAT16;
      return true;
    default:
      return false;
  }
}

enum Uid : int64_t { kX = 1, kW, kY, kB, kZ, kVirtual = 100 };

// Dimensions (N, C, spatial...) and their strides in LINEAR or HWC order; 1-D problems become
// 2-D with a unit leading spatial axis.
struct Layout {
  std::vector<int64_t> dims, strides;
};

Layout layoutOf(int64_t n, int64_t c, const std::vector<int64_t>& sp, bool hwc) {
  Layout l;
  l.dims = {n, c};
  if (sp.size() == 1) l.dims.push_back(1);
  l.dims.insert(l.dims.end(), sp.begin(), sp.end());
  const size_t r = l.dims.size();
  l.strides.assign(r, 1);
  if (!hwc) {
    for (size_t i = r - 1; i-- > 0;) l.strides[i] = l.strides[i + 1] * l.dims[i + 1];
  } else {
    l.strides[1] = 1;
    int64_t s = l.dims[1];
    for (size_t i = r; i-- > 2;) l.strides[i] = s, s *= l.dims[i];
    l.strides[0] = s;
  }
  return l;
}

Desc tensor(int64_t uid, cudnnDataType_t t, const Layout& l, bool is_virtual) {
  Desc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t align = 16;
  const bool v = is_virtual;
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &t)
      .ints(CUDNN_ATTR_TENSOR_DIMENSIONS, l.dims)
      .ints(CUDNN_ATTR_TENSOR_STRIDES, l.strides)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &v);
  d.finalize();
  return d;
}

Desc pointwise(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y) {
  Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec);
  pw.finalize();
  Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
      .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  op.finalize();
  return op;
}

bool actMode(Act a, cudnnPointwiseMode_t* m) {
  switch (a) {
    case Act::kRelu:
      *m = CUDNN_POINTWISE_RELU_FWD;
      return true;
    case Act::kGelu:
      *m = CUDNN_POINTWISE_GELU_FWD;
      return true;
    case Act::kGeluTanh:
      *m = CUDNN_POINTWISE_GELU_APPROX_TANH_FWD;
      return true;
    case Act::kSigmoid:
      *m = CUDNN_POINTWISE_SIGMOID_FWD;
      return true;
    case Act::kTanh:
      *m = CUDNN_POINTWISE_TANH_FWD;
      return true;
    case Act::kSilu:  // swish with cuDNN's default beta, 1: x sigmoid(x)
      *m = CUDNN_POINTWISE_SWISH_FWD;
      return true;
    default:
      return false;
  }
}

bool hasEpilogue(const ConvArgs& a) {
  return a.bias || a.z || a.act != Act::kNone;
}

// The operation graph of `a`; `fused`: with the epilogue. Null when cuDNN rejects it.
struct Graph {
  std::deque<Desc> keep;  // tensors and operations the graph refers to (stable addresses)
  Desc graph;
};

std::unique_ptr<Graph> buildGraph(cudnnHandle_t h, const ConvArgs& a, bool fused) {
  cudnnDataType_t dt;
  if (!graphTypes(a.dtype, &dt)) return nullptr;
  auto g = std::make_unique<Graph>();
  const Layout lx = layoutOf(a.n, a.c, a.isz, a.hwc);
  const Layout ly = layoutOf(a.n, a.m, a.osz, a.hwc);
  const Layout lw = layoutOf(a.m, a.c / a.group, a.k, a.hwc);
  std::vector<int64_t> pre = a.pb, post = a.pe, str = a.s, dil = a.d;
  if (a.nd == 1) {
    pre.insert(pre.begin(), 0), post.insert(post.begin(), 0), str.insert(str.begin(), 1),
        dil.insert(dil.begin(), 1);
  }
  const int64_t spatial = static_cast<int64_t>(pre.size());
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .ints(CUDNN_ATTR_CONVOLUTION_DILATIONS, dil)
      .ints(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, str)
      .ints(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, pre)
      .ints(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, post);
  if (!conv.finalize()) return nullptr;

  const bool epi = fused && hasEpilogue(a);
  int64_t next_virtual = kVirtual;
  Desc& x = g->keep.emplace_back(tensor(kX, dt, lx, false));
  Desc& w = g->keep.emplace_back(tensor(kW, dt, lw, false));
  Desc* cur = &g->keep.emplace_back(
      tensor(epi ? next_virtual++ : kY, epi ? CUDNN_DATA_FLOAT : dt, ly, epi));
  std::vector<cudnnBackendDescriptor_t> ops;
  {
    Desc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    const float alpha = 1.f, beta = 0.f;
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, *cur)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta);
    if (!op.finalize()) return nullptr;
    ops.push_back(op.get());
    g->keep.push_back(std::move(conv));
    g->keep.push_back(std::move(op));
  }
  if (epi) {
    // Steps of the epilogue; the last writes y.
    struct Step {
      cudnnPointwiseMode_t mode;
      int64_t operand;  // uid of the second operand, 0 for none
    };
    std::vector<Step> steps;
    if (a.bias) steps.push_back({CUDNN_POINTWISE_ADD, kB});
    if (a.z) steps.push_back({CUDNN_POINTWISE_ADD, kZ});
    if (a.act != Act::kNone) {
      cudnnPointwiseMode_t m;
      if (!actMode(a.act, &m)) return nullptr;
      steps.push_back({m, 0});
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      const bool last = i + 1 == steps.size();
      Desc* operand = nullptr;
      if (steps[i].operand == kB) {
        Layout lb{std::vector<int64_t>(ly.dims.size(), 1), std::vector<int64_t>(ly.dims.size(), 1)};
        lb.dims[1] = a.m;
        lb.strides[0] = a.m;
        operand = &g->keep.emplace_back(tensor(kB, dt, lb, false));
      } else if (steps[i].operand == kZ) {
        operand = &g->keep.emplace_back(tensor(kZ, dt, ly, false));
      }
      Desc* out = &g->keep.emplace_back(
          tensor(last ? kY : next_virtual++, last ? dt : CUDNN_DATA_FLOAT, ly, !last));
      Desc& op = g->keep.emplace_back(pointwise(steps[i].mode, *cur, operand, *out));
      if (!op.ok()) return nullptr;
      ops.push_back(op.get());
      cur = out;
    }
  }
  g->graph = Desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  g->graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h)
      .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops.data(),
           static_cast<int64_t>(ops.size()));
  if (!g->graph.finalize()) return nullptr;
  return g;
}

// Whether opforge accepts the engine of `cfg` for data type `t`.
bool acceptable(const Desc& cfg, DataType t, bool tf32) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t count = 0;
  if (cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &e) != CUDNN_STATUS_SUCCESS ||
      count != 1)
    return false;
  cudnnBackendNumericalNote_t num[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  cudnnBackendBehaviorNote_t beh[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  int64_t nn = 0, nb = 0;
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nn, num) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nb, beh) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < nb; ++i)
    if (beh[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) return false;
  for (int64_t i = 0; i < nn; ++i) {
    if (num[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) return false;
    if (t == DataType::kFloat32 && !tf32 &&
        (num[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
         num[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
         num[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION))
      return false;
  }
  return true;
}

struct Candidate {
  Desc plan;
  size_t workspace = 0;
  bool fused = false;  // the plan applies the epilogue itself
};

struct Problem {
  std::unique_ptr<Graph> graphs[2];  // [fused, conv only]; kept alive while plans use them
  std::vector<Candidate> candidates;
};

constexpr size_t kMaxGraphWorkspace = size_t{512} << 20;
constexpr size_t kMaxProblems = 512;
// The ordering of the candidates (the header says how).
constexpr size_t kFirstHeur = 4;
constexpr size_t kFirstFallback = 3;

// The engine's global index (cuDNN's id for it across problems), -1 when cuDNN does not say.
int64_t engineIndex(const Desc& cfg) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t count = 0, index = -1;
  if (cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &e) != CUDNN_STATUS_SUCCESS ||
      count != 1 ||
      cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count,
                               &index) != CUDNN_STATUS_SUCCESS)
    return -1;
  return index;
}

// The accepted configurations of heuristics `mode` for graph `g`, at most `limit`, skipping engines
// whose global index is in `seen` (and adding theirs).
void addCandidates(cudnnHandle_t h, const ConvArgs& a, const Graph& g, bool fused,
                   cudnnBackendHeurMode_t mode, size_t limit, std::vector<int64_t>& seen,
                   std::vector<Candidate>& out) {
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g.graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
  if (!heur.finalize()) return;
  constexpr int kAsk = 64;
  std::vector<Desc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int i = 0; i < kAsk; ++i) {
    cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(cfgs.back().get());
  }
  int64_t n = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, kAsk, &n,
                               raw.data()) != CUDNN_STATUS_SUCCESS)
    return;
  const size_t start = out.size();
  for (int64_t i = 0; i < n && out.size() - start < limit; ++i) {
    const int64_t index = engineIndex(cfgs[i]);
    // Mode A may list one engine with several knob settings; the fallback list repeats engines.
    if (mode == CUDNN_HEUR_MODE_FALLBACK && index >= 0 &&
        std::find(seen.begin(), seen.end(), index) != seen.end())
      continue;
    if (!acceptable(cfgs[i], a.dtype, a.tf32)) continue;
    Candidate c;
    c.fused = fused;
    c.plan = Desc(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    c.plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[i]);
    if (!c.plan.finalize()) continue;
    int64_t ws = 0, cnt = 0;
    if (cudnnBackendGetAttribute(c.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                 CUDNN_TYPE_INT64, 1, &cnt, &ws) != CUDNN_STATUS_SUCCESS ||
        ws < 0 || static_cast<size_t>(ws) > kMaxGraphWorkspace)
      continue;
    c.workspace = static_cast<size_t>(ws);
    if (index >= 0) seen.push_back(index);
    out.push_back(std::move(c));
  }
}

std::string keyOf(const ConvArgs& a, int dev) {
  std::string k = std::to_string(dev) + "|" + std::to_string(static_cast<int>(a.dtype)) + "|" +
                  (a.hwc ? "h" : "l") + (a.tf32 ? "t" : "") + (a.bias ? "b" : "") +
                  (a.z ? "z" : "") + std::to_string(static_cast<int>(a.act)) + "|" +
                  std::to_string(a.n) + "," + std::to_string(a.c) + "," + std::to_string(a.m) +
                  "," + std::to_string(a.group);
  for (const auto* v : {&a.isz, &a.osz, &a.k, &a.s, &a.d, &a.pb, &a.pe}) {
    k += "|";
    for (int64_t e : *v) k += std::to_string(e) + ",";
  }
  return k;
}

bool graphShapeOk(const ConvArgs& a) {
  if (a.nd < 1 || a.nd > 3 || a.group < 1 || a.c % a.group != 0 || a.m % a.group != 0) return false;
  cudnnDataType_t dt;
  return graphTypes(a.dtype, &dt);
}

// The candidates of `a` for this thread's handle on the current device (built on first use).
Result<const Problem*> problemOf(const ConvArgs& a, cudnnHandle_t h, int dev) {
  thread_local std::map<std::string, std::unique_ptr<Problem>> cache;
  const std::string key = keyOf(a, dev);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  if (cache.size() >= kMaxProblems) cache.clear();  // no caller holds an entry between calls
  auto p = std::make_unique<Problem>();
  // Finalizing plans may allocate; allow it even while this thread captures a CUDA graph.
  cudaStreamCaptureMode cm = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&cm);
  // The fused graph's candidates and the convolution's alone, taken in turn (fused first): the
  // engines that fuse the epilogue are not always the fast ones, nor are they always listed.
  // lists[graph][0]: mode A's, [1]: the fallback list's other engines.
  std::vector<Candidate> lists[2][2];
  const size_t all = static_cast<size_t>(kDnnGraphTactics);
  for (int f = 0; f < 2; ++f) {
    const bool fused = f == 0;
    if (fused && !hasEpilogue(a)) continue;
    p->graphs[f] = buildGraph(h, a, fused);
    if (!p->graphs[f]) continue;
    std::vector<int64_t> seen;
    addCandidates(h, a, *p->graphs[f], fused, CUDNN_HEUR_MODE_A, all, seen, lists[f][0]);
    addCandidates(h, a, *p->graphs[f], fused, CUDNN_HEUR_MODE_FALLBACK, all, seen, lists[f][1]);
  }
  size_t used[2][2] = {};
  const auto take = [&](int source, size_t upto) {
    for (bool more = true; more;) {
      more = false;
      for (int f = 0; f < 2; ++f) {
        auto& l = lists[f][source];
        if (used[f][source] < std::min(upto, l.size()) && p->candidates.size() < all) {
          p->candidates.push_back(std::move(l[used[f][source]++]));
          more = true;
        }
      }
    }
  };
  take(0, kFirstHeur);
  take(1, kFirstFallback);
  take(0, all);
  take(1, all);
  (void)cudaThreadExchangeStreamCaptureMode(&cm);
  const Problem* r = p.get();
  cache.emplace(key, std::move(p));
  return r;
}

}  // namespace

Result<void*> cudnnHandleFor(void* stream) {
  thread_local Handles handles;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess)
    return Status::runtime(std::string("cudaGetDevice: ") + cudaGetErrorString(e));
  cudnnHandle_t h = nullptr;
  auto it = handles.by_device.find(dev);
  if (it != handles.by_device.end()) {
    h = it->second;
  } else {
    // Creation allocates; allow it even while this thread captures a CUDA graph.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    cudnnStatus_t s = cudnnCreate(&h);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    OPFORGE_RETURN_IF_ERROR(dnnStatusOf(s, "create"));
    handles.by_device[dev] = h;
  }
  OPFORGE_RETURN_IF_ERROR(
      dnnStatusOf(cudnnSetStream(h, static_cast<cudaStream_t>(stream)), "set stream"));
  return static_cast<void*>(h);
}

bool convGraphApplies(const ConvArgs& a, int rank, size_t* workspace) {
  if (rank < 0 || rank >= kDnnGraphTactics || !graphShapeOk(a)) return false;
  auto h = cudnnHandleFor(nullptr);
  if (!h) return false;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  auto p = problemOf(a, static_cast<cudnnHandle_t>(*h), dev);
  if (!p || rank >= static_cast<int>((*p)->candidates.size())) return false;
  if (workspace) *workspace = (*p)->candidates[rank].workspace;
  return true;
}

Result<bool> convGraphRun(const ConvArgs& a, int rank, void* workspace, size_t workspace_size,
                          void* stream) {
  if (!graphShapeOk(a)) return Status::unsupported("cuDNN graph: data type or geometry");
  OPFORGE_ASSIGN_OR_RETURN(void* hv, cudnnHandleFor(stream));
  auto h = static_cast<cudnnHandle_t>(hv);
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return Status::runtime("cudaGetDevice failed");
  OPFORGE_ASSIGN_OR_RETURN(const Problem* p, problemOf(a, h, dev));
  if (rank < 0 || rank >= static_cast<int>(p->candidates.size()))
    return Status::runtime("cuDNN graph: engine " + std::to_string(rank) + " of " +
                           std::to_string(p->candidates.size()) +
                           " does not exist for this convolution");
  const Candidate& c = p->candidates[rank];
  if (c.workspace > workspace_size)
    return Status::runtime("cuDNN graph: workspace of " + std::to_string(workspace_size) +
                           " bytes, the engine needs " + std::to_string(c.workspace));
  for (const void* q : {a.x, a.w, static_cast<const void*>(a.y), a.bias, a.z})
    if (reinterpret_cast<uintptr_t>(q) % 16 != 0)
      return Status::unsupported(
          "cuDNN graph engines need 16-byte aligned tensors (the plan declares that alignment)");
  std::vector<int64_t> uids{kX, kW, kY};
  std::vector<void*> ptrs{const_cast<void*>(a.x), const_cast<void*>(a.w), a.y};
  if (c.fused && a.bias) uids.push_back(kB), ptrs.push_back(const_cast<void*>(a.bias));
  if (c.fused && a.z) uids.push_back(kZ), ptrs.push_back(const_cast<void*>(a.z));
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  void* ws = c.workspace ? workspace : nullptr;
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(),
           static_cast<int64_t>(uids.size()))
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs.data(),
           static_cast<int64_t>(ptrs.size()))
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &ws);
  if (!pack.finalize()) return Status::runtime("cuDNN graph: variant pack rejected");
  OPFORGE_RETURN_IF_ERROR(
      dnnStatusOf(cudnnBackendExecute(h, c.plan.get(), pack.get()), "graph execute"));
  return c.fused;
}

}  // namespace opforge::ops

#endif  // OPFORGE_WITH_CUDNN
