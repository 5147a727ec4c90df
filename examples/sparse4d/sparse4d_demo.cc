// sparse4d_demo — Sparse4Dv3 multi-frame inference from opforge plans, no Python.
//
// Loads three plans (backbone, head for the first frame, head for later frames; CPU or CUDA, FP32
// or FP16), reads a folder of frames (.npy files written by examples/sparse4d/sparse4d.py), and
// runs the sequence: backbone -> head -> the instance bank's bookkeeping between frames, on the
// host:
//   confidence = sigmoid(max class logit); the first Nt rows (instances carried over from the
//   previous frame) keep at least decay * their previous confidence; the Nt most confident
//   instances (feature, refined box, confidence) are cached for the next frame; tracking ids follow
//   the cached instances.
// The next frame's later-frame head gets the cache, the ego motion T_temp2cur =
// inverse(T_global_cur) * T_global_prev and the time interval. A frame more than --maxTimeInterval
// seconds after the previous one still runs the later-frame head (the graph ignores the stale
// cache, as Sparse4D does).
//
//   sparse4d_demo --plans=DIR [--precision=fp32|fp16] --frames=DIR [--plugins=LIB]
//   [--saveOutputs=DIR]
//                 [--loops=N] [--saveFeatureMaps=N] [--decay=0.6] [--show=K] [--noCudaGraph]
//
// Per-module latency (median over frames x loops): upload (frame data to the plan's memory),
// backbone, head (first frame / later frames), bank (outputs to the host, bookkeeping, cache back),
// and the whole frame. CUDA plans: wall-clock times around each synchronous step, plus the GPU time
// of each run.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <unistd.h>

#include "npy.h"
#include "opforge/builder.h"
#include "opforge/io.h"
#include "opforge/registry.h"
#include "opforge/runtime.h"

#ifdef OPFORGE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace fs = std::filesystem;
using opforge::DataType;
using opforge::Status;

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "sparse4d_demo: error: %s\n", msg.c_str());
  std::exit(1);
}
void check(const Status& st, const std::string& what) {
  if (!st) die(what + ": " + st.message());
}
template <typename T>
T must(opforge::Result<T> r, const std::string& what) {
  if (!r) die(what + ": " + r.status().message());
  return std::move(r).value();
}

std::string dimsText(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

#ifdef OPFORGE_WITH_CUDA
void cudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}
#endif

double nowMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// ---- one plan, its context and its inputs/outputs
// ------------------------------------------------

struct Stage {
  std::string name, path;
  std::shared_ptr<opforge::Engine> engine;
  std::unique_ptr<opforge::ExecutionContext> ctx;
  std::map<std::string, opforge::IOTensorInfo> io;
  bool cuda = false;
  std::map<std::string, void*> dev;  // CUDA: every input/output bound to device memory
  std::vector<void*> owned;
  void* stream =
      nullptr;  // CUDA: one stream for the copies and the runs of every stage (keeps them ordered)

  const std::vector<int64_t>& dims(const std::string& t) const {
    auto it = io.find(t);
    if (it == io.end())
      die(path + ": the plan has no input or output named '" + t + "' (is it a " + name +
          " plan?)");
    return it->second.dims;
  }
  size_t bytes(const std::string& t) const {
    size_t n = opforge::dtypeSize(io.at(t).dtype);
    for (int64_t d : dims(t)) n *= static_cast<size_t>(d);
    return n;
  }

  void load(const std::string& stage_name, const std::string& file,
            const std::shared_ptr<opforge::Registry>& reg) {
    name = stage_name;
    path = file;
    engine = must(opforge::Engine::loadFile(file, reg), "loading " + file);
    ctx = must(engine->createExecutionContext(), file);
    cuda = engine->backend() == opforge::Backend::kCuda;
    for (const auto& t : engine->ioTensors()) {
      if (t.dtype != DataType::kFloat32 && !(t.dtype == DataType::kInt64 && !t.is_input))
        die(file + ": " + t.name + " is " + opforge::dtypeName(t.dtype) +
            "; the demo exchanges FP32 tensors (FP16 "
            "plans keep FP32 inputs and outputs) and INT64 indices");
      for (int64_t d : t.dims)
        if (d < 0)
          die(file + ": " + t.name + " has a dynamic shape " + t.shape +
              "; build the plans with static shapes");
      io[t.name] = t;
    }
#ifdef OPFORGE_WITH_CUDA
    if (cuda) {
      for (const auto& [n, t] : io) {
        void* p = nullptr;
        cudaCheck(cudaMalloc(&p, bytes(n)), "cudaMalloc");
        owned.push_back(p);
        dev[n] = p;
        check(ctx->setTensorAddress(n, p), file);
      }
    }
#else
    if (cuda) die(file + " is a CUDA plan but this demo was built without CUDA");
#endif
  }
  ~Stage() {
#ifdef OPFORGE_WITH_CUDA
    for (void* p : owned) cudaFree(p);
#endif
  }
  // Makes input `t` read another stage's device buffer (CUDA; no copy between stages).
  void share(const std::string& t, void* p) {
    dev[t] = p;
    check(ctx->setTensorAddress(t, p), path);
  }
  void setInput(const std::string& t, const void* host, size_t n) {
    if (n != bytes(t))
      die(path + ": input '" + t + "' is FP32" + dimsText(dims(t)) + " (" +
          std::to_string(bytes(t)) + " bytes); got " + std::to_string(n) + " bytes");
#ifdef OPFORGE_WITH_CUDA
    if (cuda) {
      auto s = static_cast<cudaStream_t>(stream);
      cudaCheck(cudaMemcpyAsync(dev[t], host, n, cudaMemcpyHostToDevice, s),
                "cudaMemcpyAsync to the device");
      return;
    }
#endif
    check(ctx->setInput(t, host, n), path + ": input '" + t + "'");
  }
  // Copies output `t` to host memory.
  template <typename T>
  void getOutput(const std::string& t, std::vector<T>& host) {
    host.resize(bytes(t) / sizeof(T));
#ifdef OPFORGE_WITH_CUDA
    if (cuda) {
      auto s = static_cast<cudaStream_t>(stream);
      cudaCheck(cudaMemcpyAsync(host.data(), dev[t], bytes(t), cudaMemcpyDeviceToHost, s),
                "cudaMemcpyAsync to the host");
      cudaCheck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
      return;
    }
#endif
    opforge::Tensor o = must(ctx->output(t), path + ": output '" + t + "'");
    std::memcpy(host.data(), o.data, bytes(t));
  }
  const float* hostOutput(const std::string& t) {  // CPU plans: the context's memory
    return must(ctx->output(t), path + ": output '" + t + "'").as<float>();
  }
  double run() {  // GPU ms (CUDA) or host ms; returns when the run (and earlier copies) are done
    if (cuda) {
      check(ctx->enqueue(stream), "running " + path);
      check(ctx->synchronize(), "running " + path);
    } else {
      check(ctx->execute(), "running " + path);
    }
    return ctx->lastRunTimes().compute_ms;
  }
};

// ---- frames ------------------------------------------------------------------------------------

struct Frame {
  std::string dir;
  opforge::TensorValue img, projection_mat, image_wh;
  double timestamp = 0;
  std::array<double, 16> T_global{};
};

opforge::TensorValue readNpy(const fs::path& p, DataType want) {
  auto v = must(opforge::npy::read(p.string()), "reading " + p.string());
  if (v.desc.dtype != want)
    die(p.string() + ": dtype " + opforge::dtypeName(v.desc.dtype) + ", expected " +
        opforge::dtypeName(want));
  return v;
}

std::vector<Frame> readFrames(const std::string& folder) {
  std::vector<fs::path> dirs;
  if (!fs::is_directory(folder)) die("--frames: " + folder + " is not a folder");
  for (const auto& e : fs::directory_iterator(folder))
    if (e.is_directory() && e.path().filename().string().rfind("frame_", 0) == 0)
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty())
    die(folder + ": no frame_NNNN folders (write them with examples/sparse4d/sparse4d.py frames)");
  std::vector<Frame> frames;
  for (const auto& d : dirs) {
    Frame f;
    f.dir = d.string();
    f.img = readNpy(d / "img.npy", DataType::kFloat32);
    f.projection_mat = readNpy(d / "projection_mat.npy", DataType::kFloat32);
    f.image_wh = readNpy(d / "image_wh.npy", DataType::kFloat32);
    auto ts = readNpy(d / "timestamp.npy", DataType::kFloat64);
    auto T = readNpy(d / "T_global.npy", DataType::kFloat64);
    if (ts.desc.numel() != 1) die((d / "timestamp.npy").string() + ": expected one value");
    if (T.desc.numel() != 16) die((d / "T_global.npy").string() + ": expected a 4x4 matrix");
    std::memcpy(&f.timestamp, ts.data.data(), 8);
    std::memcpy(f.T_global.data(), T.data.data(), 16 * 8);
    frames.push_back(std::move(f));
  }
  return frames;
}

// Inverse of a 4x4 matrix (row-major), Gauss-Jordan with partial pivoting.
std::array<double, 16> inverse4(const std::array<double, 16>& m) {
  double a[4][8];
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) a[r][c] = c < 4 ? m[r * 4 + c] : (c - 4 == r ? 1.0 : 0.0);
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    if (std::fabs(a[p][c]) < 1e-12) die("T_global is singular");
    if (p != c)
      for (int k = 0; k < 8; ++k) std::swap(a[p][k], a[c][k]);
    const double inv = 1.0 / a[c][c];
    for (int k = 0; k < 8; ++k) a[c][k] *= inv;
    for (int r = 0; r < 4; ++r)
      if (r != c) {
        const double f = a[r][c];
        for (int k = 0; k < 8; ++k) a[r][k] -= f * a[c][k];
      }
  }
  std::array<double, 16> out{};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) out[r * 4 + c] = a[r][c + 4];
  return out;
}

std::array<double, 16> matmul4(const std::array<double, 16>& a, const std::array<double, 16>& b) {
  std::array<double, 16> c{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) c[i * 4 + j] += a[i * 4 + k] * b[k * 4 + j];
  return c;
}

// ---- the instance bank (host)
// ---------------------------------------------------------------------

struct Bank {
  int num_anchor = 0, num_temp = 0, embed = 0, num_cls = 0;
  float decay = 0.6f;
  double max_time_interval = 2.0;
  bool sort_cache = true;
  bool has_cache = false;
  std::vector<float> feature, anchor, confidence;  // cached: [Nt, E], [Nt, 11], [Nt]
  std::vector<int64_t> ids;                        // tracking ids of the cached instances
  int64_t next_id = 0;
  double prev_time = 0;
  std::array<double, 16> prev_T{};

  void reset() {
    has_cache = false;
    next_id = 0;
  }

  // Tracking ids of the current output rows: the first Nt rows carry the cached instances' ids
  // (when the previous frame is recent), the others get new ids in row order.
  std::vector<int64_t> assignIds(bool recent_cache) {
    std::vector<int64_t> out(num_anchor, -1);
    if (has_cache && recent_cache)
      for (int i = 0; i < num_temp; ++i) out[i] = ids[i];
    for (int i = 0; i < num_anchor; ++i)
      if (out[i] < 0) out[i] = next_id++;
    return out;
  }

  // The cache step after a frame (batch 1).
  void cache(const float* inst, const float* anc, const float* cls,
             const std::vector<int64_t>& row_ids) {
    std::vector<float> conf(num_anchor);
    for (int i = 0; i < num_anchor; ++i) {
      float m = cls[static_cast<size_t>(i) * num_cls];
      for (int j = 1; j < num_cls; ++j) m = std::max(m, cls[static_cast<size_t>(i) * num_cls + j]);
      conf[i] = 1.0f / (1.0f + std::exp(-m));
    }
    if (has_cache)
      for (int i = 0; i < num_temp; ++i) conf[i] = std::max(confidence[i] * decay, conf[i]);
    std::vector<int> order(num_anchor);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + num_temp, order.end(), [&](int a, int b) {
      return conf[a] > conf[b] || (conf[a] == conf[b] && a < b);
    });
    // Kept in row order (the head is permutation-equivariant over instances; a canonical order
    // makes the next frame independent of how near-equal confidences were ranked). Sparse4D keeps
    // them by confidence.
    if (sort_cache) std::sort(order.begin(), order.begin() + num_temp);
    feature.resize(static_cast<size_t>(num_temp) * embed);
    anchor.resize(static_cast<size_t>(num_temp) * 11);
    confidence.resize(num_temp);
    ids.resize(num_temp);
    for (int k = 0; k < num_temp; ++k) {
      const int r = order[k];
      std::memcpy(&feature[static_cast<size_t>(k) * embed], inst + static_cast<size_t>(r) * embed,
                  embed * 4);
      std::memcpy(&anchor[static_cast<size_t>(k) * 11], anc + static_cast<size_t>(r) * 11, 11 * 4);
      confidence[k] = conf[r];
      ids[k] = row_ids[r];
    }
    has_cache = true;
  }
};

// ---- statistics --------------------------------------------------------------------------------

struct Series {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  double median() const {
    if (v.empty()) return NAN;
    std::vector<double> s = v;
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    double m = s[s.size() / 2];
    if (s.size() % 2 == 0) {
      std::nth_element(s.begin(), s.begin() + s.size() / 2 - 1, s.end());
      m = 0.5 * (m + s[s.size() / 2 - 1]);
    }
    return m;
  }
  double min() const { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }
};

void saveNpy(const fs::path& p, DataType t, const std::vector<int64_t>& dims, const void* data) {
  opforge::TensorDesc d;
  d.dtype = t;
  d.dims = dims;
  check(opforge::npy::write(p.string(), d, data), "writing " + p.string());
}

std::string exeDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.find_last_of('/'));
}

void usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s --plans=DIR [--precision=fp32|fp16] --frames=DIR [options]\n"
      "  --plans=DIR          DIR/{backbone,head_first,head_later}_<precision>.plan\n"
      "  --backbone=P --headFirst=P --headLater=P   plan files (instead of --plans)\n"
      "  --frames=DIR         frame_NNNN/{img,projection_mat,image_wh,timestamp,T_global}.npy\n"
      "  --plugins=LIB        op library (default: <exe>/../lib/libopforge_ops.so)\n"
      "  --saveOutputs=DIR    per frame: the head's outputs, the cache, tracking ids (.npy)\n"
      "  --saveFeatureMaps=N  also save the backbone output of the first N frames\n"
      "  --loops=N            run the sequence N times (bank reset each time) for latency (default "
      "1)\n"
      "  --decay=F            confidence decay (default 0.6)\n"
      "  --maxTimeInterval=S  older caches are ignored (default 2; must match the exported graph)\n"
      "  --show=K             print the K best detections of each frame (default 3)\n"
      "  --exportTimes=FILE   write the latency table as JSON\n"
      "  --noCudaGraph        CUDA plans: no graph capture/replay\n"
      "  --cacheByConfidence  keep the cache by descending confidence (Sparse4D's order) instead "
      "of row order\n",
      argv0);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string plans, precision = "fp32", frames_dir,
                     plugins = exeDir() + "/../lib/libopforge_ops.so", save;
  std::string p_backbone, p_first, p_later, export_times;
  int loops = 1, show = 3, save_fm = 0;
  float decay = 0.6f;
  double max_dt = 2.0;
  bool cuda_graph = true, sort_cache = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* flag) -> const char* {
      size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = val("--plans="))
      plans = v;
    else if (const char* v = val("--precision="))
      precision = v;
    else if (const char* v = val("--backbone="))
      p_backbone = v;
    else if (const char* v = val("--headFirst="))
      p_first = v;
    else if (const char* v = val("--headLater="))
      p_later = v;
    else if (const char* v = val("--frames="))
      frames_dir = v;
    else if (const char* v = val("--plugins="))
      plugins = v;
    else if (const char* v = val("--saveOutputs="))
      save = v;
    else if (const char* v = val("--saveFeatureMaps="))
      save_fm = std::atoi(v);
    else if (const char* v = val("--loops="))
      loops = std::max(1, std::atoi(v));
    else if (const char* v = val("--decay="))
      decay = std::strtof(v, nullptr);
    else if (const char* v = val("--maxTimeInterval="))
      max_dt = std::strtod(v, nullptr);
    else if (const char* v = val("--show="))
      show = std::atoi(v);
    else if (const char* v = val("--exportTimes="))
      export_times = v;
    else if (a == "--noCudaGraph")
      cuda_graph = false;
    else if (a == "--cacheByConfidence")
      sort_cache = false;
    else
      usage(argv[0]);
  }
  if (precision != "fp32" && precision != "fp16") die("--precision must be fp32 or fp16");
  if (!plans.empty()) {
    if (p_backbone.empty()) p_backbone = plans + "/backbone_" + precision + ".plan";
    if (p_first.empty()) p_first = plans + "/head_first_" + precision + ".plan";
    if (p_later.empty()) p_later = plans + "/head_later_" + precision + ".plan";
  }
  if (p_backbone.empty() || p_first.empty() || p_later.empty() || frames_dir.empty())
    usage(argv[0]);

  auto reg = opforge::Registry::global();
  check(reg->loadLibrary(plugins), "--plugins");

  Stage bb, hf, hl;
  bb.load("backbone", p_backbone, reg);
  hf.load("first-frame head", p_first, reg);
  hl.load("later-frame head", p_later, reg);
  if (bb.cuda != hf.cuda || bb.cuda != hl.cuda)
    die("the three plans must all be CPU plans or all CUDA plans");
  for (Stage* s : {&bb, &hf, &hl}) s->ctx->setUseCudaGraph(cuda_graph);

  // The plans must describe one configuration: shapes are checked here, before any frame runs.
  const auto& fdims = bb.dims("feature_maps");
  for (Stage* s : {&hf, &hl})
    if (s->dims("feature_maps") != fdims)
      die(s->path + " expects feature_maps " + dimsText(s->dims("feature_maps")) + " but " +
          bb.path + " produces " + dimsText(fdims) +
          ": the plans were built for different configurations");
  const auto& ifirst = hf.dims("instance_feature");
  if (ifirst.size() != 3 || ifirst[0] != 1)
    die(hf.path + ": instance_feature should be [1, anchors, dims] (batch 1)");
  if (hl.dims("instance_feature") != ifirst)
    die(hl.path + " gives instance_feature " + dimsText(hl.dims("instance_feature")) + " but " +
        hf.path + " gives " + dimsText(ifirst) +
        ": the heads were built with different anchor counts");
  Bank bank;
  bank.num_anchor = static_cast<int>(ifirst[1]);
  bank.embed = static_cast<int>(ifirst[2]);
  bank.num_cls = static_cast<int>(hf.dims("classification")[2]);
  bank.decay = decay;
  bank.max_time_interval = max_dt;
  bank.sort_cache = sort_cache;
  const auto& cdims = hl.dims("cached_feature");
  if (cdims.size() != 3 || cdims[0] != 1 || cdims[2] != bank.embed || cdims[1] >= bank.num_anchor)
    die(hl.path + " expects cached_feature " + dimsText(cdims) +
        ", which does not fit the head's " + std::to_string(bank.num_anchor) + " anchors of " +
        std::to_string(bank.embed) +
        " dims (a cache of [1, Nt, dims] with Nt < anchors): the plans were built for different "
        "anchor counts");
  bank.num_temp = static_cast<int>(cdims[1]);
  if (hl.dims("cached_anchor") != std::vector<int64_t>{1, bank.num_temp, 11})
    die(hl.path + " expects cached_anchor " + dimsText(hl.dims("cached_anchor")) + ", not [1, " +
        std::to_string(bank.num_temp) + ", 11]");

  std::vector<Frame> frames = readFrames(frames_dir);
  for (const auto& f : frames) {
    if (f.img.desc.dims != bb.dims("img"))
      die(f.dir + "/img.npy is " + dimsText(f.img.desc.dims) + " but " + bb.path + " takes img " +
          dimsText(bb.dims("img")));
    if (f.projection_mat.desc.dims != hf.dims("projection_mat"))
      die(f.dir + "/projection_mat.npy is " + dimsText(f.projection_mat.desc.dims) +
          " but the head takes " + dimsText(hf.dims("projection_mat")));
    if (f.image_wh.desc.dims != hf.dims("image_wh"))
      die(f.dir + "/image_wh.npy is " + dimsText(f.image_wh.desc.dims) + " but the head takes " +
          dimsText(hf.dims("image_wh")));
  }

#ifdef OPFORGE_WITH_CUDA
  // One stream; one feature buffer: the backbone writes it, both heads read it; the heads share
  // their outputs.
  cudaStream_t stream = nullptr;
  if (bb.cuda) {
    cudaCheck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    for (Stage* s : {&bb, &hf, &hl}) s->stream = stream;
    for (Stage* s : {&hf, &hl}) {
      s->share("feature_maps", bb.dev["feature_maps"]);
      for (const char* o : {"instance_feature", "anchor", "classification", "quality"})
        s->share(o, hf.dev[o]);
    }
  }
#endif

  std::printf("sparse4d_demo: %zu frames from %s, %s plans (%s)\n", frames.size(),
              frames_dir.c_str(), precision.c_str(), bb.engine->deviceDescription().c_str());
  std::printf("  backbone   %s: img %s -> feature_maps %s\n", bb.path.c_str(),
              dimsText(bb.dims("img")).c_str(), dimsText(fdims).c_str());
  std::printf("  head       %s / %s: %d anchors, %d cached, decay %.2f\n", hf.path.c_str(),
              hl.path.c_str(), bank.num_anchor, bank.num_temp, bank.decay);

  Series t_upload, t_bb, t_hf, t_hl, t_bank, t_frame, g_bb, g_hf, g_hl;
  bool graph_bb = false, graph_hf = false, graph_hl = false;
  std::vector<float> inst, anc, cls, qual;
  const size_t E = bank.embed, A = bank.num_anchor;
  for (int loop = 0; loop < loops; ++loop) {
    bank.reset();
    for (size_t fi = 0; fi < frames.size(); ++fi) {
      const Frame& f = frames[fi];
      const double t0 = nowMs();
      bool first = !bank.has_cache;
      Stage& head = first ? hf : hl;
      double dt = 0;
      bb.setInput("img", f.img.data.data(), f.img.data.size());
      head.setInput("projection_mat", f.projection_mat.data.data(), f.projection_mat.data.size());
      head.setInput("image_wh", f.image_wh.data.data(), f.image_wh.data.size());
      if (!first) {
        dt = f.timestamp - bank.prev_time;
        std::array<double, 16> T = matmul4(inverse4(f.T_global), bank.prev_T);
        float Tf[16], dtf = static_cast<float>(dt);
        for (int k = 0; k < 16; ++k) Tf[k] = static_cast<float>(T[k]);
        hl.setInput("T_temp2cur", Tf, sizeof(Tf));
        hl.setInput("time_interval", &dtf, sizeof(dtf));
        // cached_feature / cached_anchor: written by the previous frame's bank step.
      }
      const double t1 = nowMs();
      const double gb = bb.run();
      const double t2 = nowMs();
      if (!bb.cuda) {  // CPU plans: hand the features over through host memory
        head.setInput("feature_maps", bb.hostOutput("feature_maps"), bb.bytes("feature_maps"));
      }
      const double t2b = nowMs();
      const double gh = head.run();
      const double t3 = nowMs();
      // Bank step: outputs to the host, bookkeeping.
      const float *pi, *pa, *pc, *pq;
      if (head.cuda) {
        head.getOutput("instance_feature", inst);
        head.getOutput("anchor", anc);
        head.getOutput("classification", cls);
        head.getOutput("quality", qual);
        pi = inst.data(), pa = anc.data(), pc = cls.data(), pq = qual.data();
      } else {
        pi = head.hostOutput("instance_feature"), pa = head.hostOutput("anchor");
        pc = head.hostOutput("classification"), pq = head.hostOutput("quality");
      }
      const bool recent = first ? false : std::fabs(dt) <= bank.max_time_interval;
      std::vector<int64_t> row_ids = bank.assignIds(recent);
      bank.cache(pi, pa, pc, row_ids);
      bank.prev_time = f.timestamp;
      bank.prev_T = f.T_global;
      hl.setInput("cached_feature", bank.feature.data(), bank.feature.size() * 4);
      hl.setInput("cached_anchor", bank.anchor.data(), bank.anchor.size() * 4);
      const double t4 = nowMs();

      t_upload.add(t1 - t0);
      t_bb.add(t2 - t1);
      (first ? t_hf : t_hl).add(t3 - t2b);
      t_bank.add(t4 - t3);
      t_frame.add(t4 - t0);
      g_bb.add(gb);
      (first ? g_hf : g_hl).add(gh);
      graph_bb = bb.ctx->lastRunTimes().cuda_graph;
      (first ? graph_hf : graph_hl) = head.ctx->lastRunTimes().cuda_graph;

      if (loop == 0) {
        // The best detections: score = sigmoid(max class) * sigmoid(centerness), as Sparse4D's
        // decoder.
        std::vector<int> order(A);
        std::iota(order.begin(), order.end(), 0);
        auto score = [&](int r) {
          float m = pc[static_cast<size_t>(r) * bank.num_cls];
          int c = 0;
          for (int j = 1; j < bank.num_cls; ++j)
            if (pc[static_cast<size_t>(r) * bank.num_cls + j] > m)
              m = pc[static_cast<size_t>(r) * bank.num_cls + j], c = j;
          return std::make_pair(
              1.0f / (1.0f + std::exp(-m)) / (1.0f + std::exp(-pq[static_cast<size_t>(r) * 2])), c);
        };
        const int k = std::min<int>(show, static_cast<int>(A));
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int a, int b) { return score(a).first > score(b).first; });
        std::printf("frame %zu (%s head, dt %.2f s): %.2f ms", fi,
                    first ? "first-frame" : "later-frame", dt, t4 - t0);
        for (int j = 0; j < k; ++j) {
          const int r = order[j];
          const float* b = pa + static_cast<size_t>(r) * 11;
          std::printf(
              "%s id %lld class %d score %.3f at (%.1f, %.1f, %.1f) size %.1fx%.1fx%.1f yaw %.2f",
              j ? ";" : " |", static_cast<long long>(row_ids[r]), score(r).second, score(r).first,
              b[0], b[1], b[2], std::exp(b[3]), std::exp(b[4]), std::exp(b[5]),
              std::atan2(b[6], b[7]));
        }
        std::printf("\n");
        if (!save.empty()) {
          fs::path d =
              fs::path(save) /
              ("frame_" + std::string(4 - std::min<size_t>(4, std::to_string(fi).size()), '0') +
               std::to_string(fi));
          fs::create_directories(d);
          saveNpy(d / "instance_feature.npy", DataType::kFloat32, {1, (int64_t)A, (int64_t)E}, pi);
          saveNpy(d / "anchor.npy", DataType::kFloat32, {1, (int64_t)A, 11}, pa);
          saveNpy(d / "classification.npy", DataType::kFloat32, {1, (int64_t)A, bank.num_cls}, pc);
          saveNpy(d / "quality.npy", DataType::kFloat32, {1, (int64_t)A, 2}, pq);
          saveNpy(d / "instance_id.npy", DataType::kInt64, {1, (int64_t)A}, row_ids.data());
          if (!first && head.io.count("selected_index")) {
            std::vector<int64_t> sel;
            head.getOutput("selected_index", sel);
            saveNpy(d / "selected_index.npy", DataType::kInt64, head.dims("selected_index"),
                    sel.data());
          }
          saveNpy(d / "cached_feature.npy", DataType::kFloat32, {1, bank.num_temp, (int64_t)E},
                  bank.feature.data());
          saveNpy(d / "cached_anchor.npy", DataType::kFloat32, {1, bank.num_temp, 11},
                  bank.anchor.data());
          saveNpy(d / "cached_confidence.npy", DataType::kFloat32, {1, bank.num_temp},
                  bank.confidence.data());
          saveNpy(d / "cached_id.npy", DataType::kInt64, {1, bank.num_temp}, bank.ids.data());
          if (static_cast<int>(fi) < save_fm) {
            std::vector<float> fm;
            if (bb.cuda)
              bb.getOutput("feature_maps", fm);
            else
              fm.assign(bb.hostOutput("feature_maps"),
                        bb.hostOutput("feature_maps") + bb.bytes("feature_maps") / 4);
            saveNpy(d / "feature_maps.npy", DataType::kFloat32, fdims, fm.data());
          }
        }
      }
    }
  }

  std::printf(
      "\nlatency (ms, median over %d loop(s) of %zu frames; wall clock, each step synchronous)\n",
      loops, frames.size());
  std::printf("| module | median ms | min ms | runs |%s\n", bb.cuda ? " GPU median ms |" : "");
  std::printf("|---|---|---|---|%s\n", bb.cuda ? "---|" : "");
  auto row = [&](const char* n, const Series& s, const Series* g) {
    if (s.v.empty()) return;
    std::printf("| %s | %.3f | %.3f | %zu |", n, s.median(), s.min(), s.v.size());
    if (bb.cuda) {
      if (g)
        std::printf(" %.3f |", g->median());
      else
        std::printf(" |");
    }
    std::printf("\n");
  };
  row("upload (frame data)", t_upload, nullptr);
  row("backbone", t_bb, &g_bb);
  row("head, first frame", t_hf, &g_hf);
  row("head, later frame", t_hl, &g_hl);
  row("bank (outputs to host, cache step)", t_bank, nullptr);
  row("frame, end to end", t_frame, nullptr);
  if (bb.cuda)
    std::printf(
        "CUDA graph replay in the last run: backbone %s, first-frame head %s, later-frame head "
        "%s\n",
        graph_bb ? "yes" : "no", graph_hf ? "yes" : "no", graph_hl ? "yes" : "no");
  if (!export_times.empty()) {
    std::string j = "{\n  \"device\": \"" + bb.engine->deviceDescription() +
                    "\",\n  \"precision\": \"" + precision +
                    "\",\n  \"loops\": " + std::to_string(loops) +
                    ",\n  \"frames\": " + std::to_string(frames.size()) +
                    ",\n  \"cuda_graph\": {\"backbone\": " + (graph_bb ? "true" : "false") +
                    ", \"head_first\": " + (graph_hf ? "true" : "false") +
                    ", \"head_later\": " + (graph_hl ? "true" : "false") + "},\n  \"modules\": {";
    bool firstrow = true;
    auto jrow = [&](const char* key, const Series& s, const Series* g) {
      if (s.v.empty()) return;
      char buf[256];
      std::snprintf(buf, sizeof(buf),
                    "%s\n    \"%s\": {\"median_ms\": %.6f, \"min_ms\": %.6f, \"runs\": %zu",
                    firstrow ? "" : ",", key, s.median(), s.min(), s.v.size());
      j += buf;
      if (g && !g->v.empty()) {
        std::snprintf(buf, sizeof(buf), ", \"device_median_ms\": %.6f", g->median());
        j += buf;
      }
      j += "}";
      firstrow = false;
    };
    jrow("upload", t_upload, nullptr);
    jrow("backbone", t_bb, &g_bb);
    jrow("head_first", t_hf, &g_hf);
    jrow("head_later", t_hl, &g_hl);
    jrow("bank", t_bank, nullptr);
    jrow("frame", t_frame, nullptr);
    j += "\n  }\n}\n";
    std::vector<uint8_t> bytes(j.begin(), j.end());
    check(opforge::writeFileAtomic(export_times, bytes), "--exportTimes");
  }
#ifdef OPFORGE_WITH_CUDA
  if (stream) cudaStreamDestroy(stream);
#endif
  return 0;
}
