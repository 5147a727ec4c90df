// opforge_gpu_bench: times every CUDA tactic of the contrib ops at the sizes of ISSUE 5 with CUDA
// events (warm-up, then the median of many runs; inputs rotated among several copies when one set
// would fit in L2), and measures each result's error against the float64 CPU reference.
//
//   opforge_gpu_bench [--json FILE] [--reps N] [--quick] [--only SUBSTRING]
//
// Prints one table; --json writes one JSON object per line (read by bench/gpu/report.py, which
// adds the PyTorch peers and draws the plot). Bytes are the floor of each op (every input read
// once, every output written once); bandwidth = bytes / median time; the copy ceiling is the
// 4.16 TB/s measured on the H200 (../shared/reference/gpu-anchors.md).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu_runner.h"
#include "ops/contrib/deformable_aggregation/da_problem.h"

using namespace opforge;
using namespace opforge::gpu;
using opforge::test::DaProblem;
using opforge::test::makeDaInputs;

namespace {

constexpr double kCeilingTBs = 4.16;
constexpr size_t kL2Bytes = 50u << 20;

struct Options {
  std::string json;
  int reps = 100;
  int warmup = 10;
  bool quick = false;
  std::string only;
};

struct Row {
  std::string op, config, dtype, tactic, mode;
  double median_ms = 0, p10_ms = 0, p90_ms = 0, bytes = 0;
  double max_abs_err = -1, max_rel_err = -1;  // vs the float64 reference; -1: not measured
  std::string note;
};

TensorValue hostTensor(DataType t, std::vector<int64_t> dims) {
  TensorValue v;
  v.desc = TensorDesc{t, std::move(dims)};
  v.data.assign(v.desc.bytes(), 0);
  return v;
}

TensorValue uniform(DataType t, std::vector<int64_t> dims, std::mt19937_64& rng, double lo,
                    double hi) {
  TensorValue v = hostTensor(t, std::move(dims));
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < v.desc.numel(); ++i) storeFromDouble(v.data.data(), t, i, u(rng));
  return v;
}

TensorValue convert(const TensorValue& x, DataType t) {
  if (!isFloatType(x.desc.dtype)) return x;
  TensorValue y = hostTensor(t, x.desc.dims);
  for (int64_t i = 0; i < x.desc.numel(); ++i)
    storeFromDouble(y.data.data(), t, i, loadAsDouble(x.data.data(), x.desc.dtype, i));
  return y;
}

// Max abs and rel error of `got` against `want` (any float types), NaN counted as infinite.
std::pair<double, double> errors(const TensorValue& got, const TensorValue& want) {
  double a = 0, r = 0;
  if (got.desc.numel() != want.desc.numel()) return {INFINITY, INFINITY};
  for (int64_t i = 0; i < got.desc.numel(); ++i) {
    const double g = loadAsDouble(got.data.data(), got.desc.dtype, i),
                 w = loadAsDouble(want.data.data(), want.desc.dtype, i);
    const double d =
        std::isnan(g) != std::isnan(w) ? INFINITY : (std::isnan(g) ? 0 : std::fabs(g - w));
    a = std::max(a, d);
    if (std::fabs(w) > 1e-3) r = std::max(r, d / std::fabs(w));
  }
  return {a, r};
}

double median(std::vector<float> v, double q = 0.5) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

// Device copies of one set of inputs and outputs, `sets` times (rotated to defeat L2 reuse).
struct Sets {
  std::vector<std::vector<DeviceBuffer>> in, out;
  std::vector<std::vector<Tensor>> in_t, out_t;
  DeviceBuffer ws;
};

Sets allocate(const Prepared& p, const std::vector<TensorValue>& inputs, int sets) {
  Sets s;
  s.in.resize(sets);
  s.out.resize(sets);
  s.in_t.resize(sets);
  s.out_t.resize(sets);
  for (int k = 0; k < sets; ++k) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      s.in[k].emplace_back(inputs[i].data.size());
      if (!s.in[k].back().ok()) {
        std::fprintf(stderr, "out of device memory\n");
        std::exit(2);
      }
      if (!inputs[i].data.empty())
        CUDA_OK(cudaMemcpy(s.in[k].back().data(), inputs[i].data.data(), inputs[i].data.size(),
                           cudaMemcpyHostToDevice));
      s.in_t[k].push_back(Tensor{inputs[i].desc, s.in[k].back().data(), Device::kCuda});
    }
    for (size_t o = 0; o < p.out.size(); ++o) {
      if (p.alias[o] >= 0) {  // in place
        s.out[k].emplace_back();
        s.out_t[k].push_back(Tensor{p.out[o], s.in_t[k][p.alias[o]].data, Device::kCuda});
        continue;
      }
      s.out[k].emplace_back(p.out[o].bytes());
      CUDA_OK(cudaMemset(s.out[k].back().data(), 0xff, p.out[o].bytes()));
      s.out_t[k].push_back(Tensor{p.out[o], s.out[k].back().data(), Device::kCuda});
    }
  }
  s.ws = DeviceBuffer(p.workspace);
  return s;
}

int setsFor(double bytes) {
  return std::clamp(static_cast<int>(std::ceil(3.0 * kL2Bytes / std::max(bytes, 1.0))), 1, 8);
}

// Times `call(set)` `reps` times with an event pair around each call.
std::vector<float> timeCalls(const std::function<void(int)>& call, int sets, const Options& o,
                             cudaStream_t s) {
  for (int i = 0; i < o.warmup; ++i) call(i % sets);
  CUDA_OK(cudaStreamSynchronize(s));
  std::vector<cudaEvent_t> a(o.reps), b(o.reps);
  for (int i = 0; i < o.reps; ++i) {
    CUDA_OK(cudaEventCreate(&a[i]));
    CUDA_OK(cudaEventCreate(&b[i]));
  }
  for (int i = 0; i < o.reps; ++i) {
    CUDA_OK(cudaEventRecord(a[i], s));
    call(i % sets);
    CUDA_OK(cudaEventRecord(b[i], s));
  }
  CUDA_OK(cudaStreamSynchronize(s));
  std::vector<float> ms(o.reps);
  for (int i = 0; i < o.reps; ++i) {
    CUDA_OK(cudaEventElapsedTime(&ms[i], a[i], b[i]));
    CUDA_OK(cudaEventDestroy(a[i]));
    CUDA_OK(cudaEventDestroy(b[i]));
  }
  return ms;
}

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {
    CUDA_OK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  ~Bench() { (void)cudaStreamDestroy(s_); }

  // Times every CUDA tactic of `key` on `inputs`; `check(outputs, tactic)` gives the error.
  // `graph`: also time a CUDA graph of the call (the op's eager host work stays out of it).
  void run(const std::string& key, const std::string& config, const Attrs& attrs,
           const std::vector<TensorValue>& inputs, double bytes,
           const std::function<std::pair<double, double>(const std::vector<TensorValue>&)>& check,
           bool readback_size = false, bool graph = false, const std::string& note = "") {
    if (!o_.only.empty() && (key + " " + config).find(o_.only) == std::string::npos) return;
    const RegisteredOp* op = opsRegistry()->find(key);
    if (!op) {
      std::fprintf(stderr, "op %s not found\n", key.c_str());
      std::exit(2);
    }
    for (const auto& t : op->schema().tactics) {
      if (t.backend != Backend::kCuda) continue;
      auto p = prepare(*opsRegistry(), key, attrs, inputs, t.id, true);
      if (!p) {
        std::printf("  %s %s tactic %d: %s\n", key.c_str(), config.c_str(), t.id,
                    p.status().message().c_str());
        continue;
      }
      const int sets = setsFor(bytes);
      Sets s = allocate(*p, inputs, sets);
      int32_t* pinned = nullptr;
      CUDA_OK(cudaMallocHost(&pinned, sizeof(int32_t)));
      bool failed = false;
      auto call = [&](int k) {
        Status st = p->instance->run(t.id, s.in_t[k], s.out_t[k], s.ws.data(), s.ws.size(), s_);
        if (!st && !failed) {
          std::fprintf(stderr, "%s tactic %d failed: %s\n", key.c_str(), t.id,
                       st.message().c_str());
          failed = true;
        }
        if (readback_size)  // the data-dependent size, as an engine must read it
          CUDA_OK(cudaMemcpyAsync(pinned, s.out_t[k][p->sizes[0].output].data, sizeof(int32_t),
                                  cudaMemcpyDeviceToHost, s_));
      };
      auto ms = timeCalls(call, sets, o_, s_);
      CUDA_OK(cudaStreamSynchronize(s_));
      CUDA_OK(cudaGetLastError());
      // Outputs of set 0 (in-place outputs were updated warmup + reps times: re-run once on fresh
      // data).
      std::vector<TensorValue> outs;
      if (std::any_of(p->alias.begin(), p->alias.end(), [](int a) { return a >= 0; })) {
        for (size_t i = 0; i < inputs.size(); ++i)
          CUDA_OK(cudaMemcpy(s.in[0][i].data(), inputs[i].data.data(), inputs[i].data.size(),
                             cudaMemcpyHostToDevice));
        call(0);
        CUDA_OK(cudaStreamSynchronize(s_));
      }
      for (size_t o = 0; o < p->out.size(); ++o) {
        TensorValue v = hostTensor(p->out[o].dtype, p->out[o].dims);
        if (!v.data.empty())
          CUDA_OK(
              cudaMemcpy(v.data.data(), s.out_t[0][o].data, v.data.size(), cudaMemcpyDeviceToHost));
        outs.push_back(std::move(v));
      }
      if (!p->sizes.empty()) {  // shrink to the real count
        const int32_t k = *reinterpret_cast<const int32_t*>(outs[p->sizes[0].output].data.data());
        outs[0].desc.dims[0] = std::max(0, k);
        outs[0].data.resize(outs[0].desc.bytes());
      }
      auto err = failed ? std::make_pair(double(INFINITY), double(INFINITY)) : check(outs);
      add(Row{key, config, dtypeName(inputs[0].desc.dtype), std::to_string(t.id) + " " + t.name,
              "eager", median(ms), median(ms, 0.1), median(ms, 0.9), bytes, err.first, err.second,
              failed ? "FAILED" : note});
      if (graph) {
        std::vector<cudaGraphExec_t> execs(sets);
        for (int k = 0; k < sets; ++k) {
          cudaGraph_t g = nullptr;
          CUDA_OK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
          call(k);
          CUDA_OK(cudaStreamEndCapture(s_, &g));
          CUDA_OK(cudaGraphInstantiate(&execs[k], g, 0));
          CUDA_OK(cudaGraphDestroy(g));
        }
        auto gms = timeCalls([&](int k) { CUDA_OK(cudaGraphLaunch(execs[k], s_)); }, sets, o_, s_);
        for (auto e : execs) CUDA_OK(cudaGraphExecDestroy(e));
        add(Row{key, config, dtypeName(inputs[0].desc.dtype), std::to_string(t.id) + " " + t.name,
                "graph", median(gms), median(gms, 0.1), median(gms, 0.9), bytes, err.first,
                err.second, "one call captured in a CUDA graph"});
      }
      CUDA_OK(cudaFreeHost(pinned));
    }
  }

  void print() const {
    std::printf("\n%-34s %-30s %-5s %-24s %-5s %9s %9s %9s %8s %7s %9s\n", "op", "config", "type",
                "tactic", "mode", "median ms", "p10 ms", "MB", "TB/s", "%ceil", "max|err|");
    for (const auto& r : rows_) {
      const double tbs = r.bytes / (r.median_ms * 1e-3) / 1e12;
      std::printf("%-34s %-30s %-5s %-24s %-5s %9.4f %9.4f %9.1f %8.3f %6.1f%% %9.2e %s\n",
                  r.op.c_str(), r.config.c_str(), r.dtype.c_str(), r.tactic.c_str(), r.mode.c_str(),
                  r.median_ms, r.p10_ms, r.bytes / 1e6, tbs, 100 * tbs / kCeilingTBs, r.max_abs_err,
                  r.note.c_str());
    }
  }

  void writeJson(const std::string& path) const {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return;
    }
    for (const auto& r : rows_)
      std::fprintf(f,
                   "{\"source\": \"opforge\", \"op\": \"%s\", \"config\": \"%s\", \"dtype\": "
                   "\"%s\", \"impl\": \"%s\", "
                   "\"mode\": \"%s\", \"median_ms\": %.6f, \"p10_ms\": %.6f, \"p90_ms\": %.6f, "
                   "\"bytes\": %.0f, "
                   "\"max_abs_err\": %.6g, \"max_rel_err\": %.6g, \"note\": \"%s\"}\n",
                   r.op.c_str(), r.config.c_str(), r.dtype.c_str(), r.tactic.c_str(),
                   r.mode.c_str(), r.median_ms, r.p10_ms, r.p90_ms, r.bytes,
                   std::isfinite(r.max_abs_err) ? r.max_abs_err : 1e300,
                   std::isfinite(r.max_rel_err) ? r.max_rel_err : 1e300, r.note.c_str());
    std::fclose(f);
  }

 private:
  void add(Row r) {
    const double tbs = r.bytes / (r.median_ms * 1e-3) / 1e12;
    std::printf("  %-34s %-28s %-5s %-24s %-5s %.4f ms  %.3f TB/s  err %.2e\n", r.op.c_str(),
                r.config.c_str(), r.dtype.c_str(), r.tactic.c_str(), r.mode.c_str(), r.median_ms,
                tbs, r.max_abs_err);
    std::fflush(stdout);
    rows_.push_back(std::move(r));
  }
  Options o_;
  cudaStream_t s_ = nullptr;
  std::vector<Row> rows_;
};

// The CPU reference (tactic 0) of `key` on `inputs`; output `o`.
TensorValue reference(const std::string& key, const Attrs& attrs,
                      const std::vector<TensorValue>& inputs, int o = 0) {
  auto p = prepare(*opsRegistry(), key, attrs, inputs, 0, true);
  if (!p) {
    std::fprintf(stderr, "reference of %s: %s\n", key.c_str(), p.status().message().c_str());
    std::exit(2);
  }
  std::vector<TensorValue> outs;
  std::vector<Tensor> in_t, out_t;
  for (const auto& t : inputs)
    in_t.push_back(Tensor{t.desc, const_cast<uint8_t*>(t.data.data()), Device::kCpu});
  for (size_t k = 0; k < p->out.size(); ++k) {
    outs.push_back(p->alias[k] >= 0 ? inputs[p->alias[k]]
                                    : hostTensor(p->out[k].dtype, p->out[k].dims));
  }
  for (auto& v : outs) out_t.push_back(Tensor{v.desc, v.data.data(), Device::kCpu});
  std::vector<uint8_t> ws(p->workspace);
  Status st = p->instance->run(0, in_t, out_t, ws.data(), ws.size(), nullptr);
  if (!st) {
    std::fprintf(stderr, "reference of %s: %s\n", key.c_str(), st.message().c_str());
    std::exit(2);
  }
  if (!p->sizes.empty()) {
    const int32_t k = *reinterpret_cast<const int32_t*>(outs[p->sizes[0].output].data.data());
    outs[0].desc.dims[0] = k;
    outs[0].data.resize(outs[0].desc.bytes());
  }
  return outs[o];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      o.json = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      o.reps = std::max(5, std::atoi(argv[++i]));
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--reps N] [--quick] [--only SUBSTRING]\n",
                   argv[0]);
      return 2;
    }
  }
  std::string why;
  if (!deviceAvailable(&why)) {
    std::fprintf(stderr, "opforge_gpu_bench: %s\n", why.c_str());
    return 1;
  }
  if (!opsRegistry()) return 2;
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MB; copy ceiling used: %.2f TB/s\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, kCeilingTBs);
  Bench b(o);
  std::mt19937_64 rng(2024);
  const int64_t n64mi = o.quick ? (int64_t{1} << 22) : (int64_t{64} << 20);

  {  // circ_pad: x [8,64,256,256] fp32, pads (2,2,2,2)
    const std::vector<int64_t> dims =
        o.quick ? std::vector<int64_t>{2, 16, 256, 256} : std::vector<int64_t>{8, 64, 256, 256};
    for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
      TensorValue x = uniform(t, dims, rng, -1, 1);
      const Attrs a{{"pads", std::vector<int32_t>{2, 2, 2, 2}}};
      const double out_elems = double(dims[0]) * dims[1] * (dims[2] + 4) * (dims[3] + 4);
      const double bytes = (double(x.desc.numel()) + out_elems) * dtypeSize(t);
      TensorValue want = reference("example::circ_pad_plugin", a, {x});
      b.run("example::circ_pad_plugin", "x " + dimsToString(dims) + " pads 2,2,2,2", a, {x}, bytes,
            [&](const std::vector<TensorValue>& out) { return errors(out[0], want); });
    }
  }
  {  // GELU(GELU(x)), 64 Mi elements (and the one-GELU and tanh forms for context)
    for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      TensorValue x = uniform(t, {n64mi}, rng, -6, 6);
      TensorValue x64 = convert(x, DataType::kFloat64);
      const double bytes = 2.0 * n64mi * dtypeSize(t);
      for (int which = 0; which < (t == DataType::kFloat32 ? 3 : 1); ++which) {
        Attrs a;
        std::string cfg = "gelu(gelu(x)) 64Mi";
        if (which == 0) a = {{"chain", std::vector<int32_t>{1}}};
        if (which == 1) cfg = "gelu(x) 64Mi";
        if (which == 2)
          a = {{"approximate", std::string("tanh")}, {"chain", std::vector<int32_t>{2}}},
          cfg = "gelu_tanh(gelu_tanh(x)) 64Mi";
        if (o.quick) cfg += " (quick: 4Mi)";
        TensorValue want = reference("opforge::FusedGelu", a, {x64});
        b.run("opforge::FusedGelu", cfg, a, {x}, bytes,
              [&](const std::vector<TensorValue>& out) { return errors(out[0], want); });
      }
    }
  }
  {  // non_zero [4096, 4096], half non-zero, with the size read-back
    const int64_t m = o.quick ? 1024 : 4096;
    TensorValue x = uniform(DataType::kFloat32, {m, m}, rng, -1, 1);
    std::uniform_real_distribution<double> u(0, 1);
    int64_t k = 0;
    for (int64_t i = 0; i < x.desc.numel(); ++i) {
      if (u(rng) < 0.5)
        storeFromDouble(x.data.data(), DataType::kFloat32, i, 0.0);
      else
        k += loadAsDouble(x.data.data(), DataType::kFloat32, i) != 0;
    }
    TensorValue want = reference("example::non_zero_plugin", {}, {x});
    const double bytes = double(x.desc.bytes()) + double(k) * 8 + 4;
    b.run(
        "example::non_zero_plugin", "x " + dimsToString({m, m}) + " half non-zero, count read back",
        {}, {x}, bytes,
        [&](const std::vector<TensorValue>& out) {
          const double bad = out[0].data == want.data ? 0.0 : INFINITY;
          return std::make_pair(bad, bad);
        },
        /*readback_size=*/true);
  }
  {  // elemwise_add_inplace, 64 Mi fp32 (in place)
    TensorValue x = uniform(DataType::kFloat32, {n64mi}, rng, -100, 100);
    const Attrs a{{"delta", int64_t{7}}};
    TensorValue want = reference("sample::elemwise_add_plugin_", a, {x});
    b.run("sample::elemwise_add_plugin_",
          std::string("64Mi in place") + (o.quick ? " (quick: 4Mi)" : ""), a, {x},
          2.0 * x.desc.bytes(),
          [&](const std::vector<TensorValue>& out) { return errors(out[0], want); });
  }
  {  // deformable aggregation, Sparse4Dv3 sizes: valid fraction x anchors x feature type
    for (int64_t anchors : {int64_t{900}, int64_t{1220}}) {
      for (double valid : {0.1, 0.7, 1.0}) {
        if (o.quick && (anchors != 900 || valid != 0.7)) continue;
        for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
          DaProblem p;
          p.B = 1, p.A = anchors, p.P = 13, p.Ncam = 6, p.C = 256, p.G = 8;
          p.levels = {{64, 176}, {32, 88}, {16, 44}, {8, 22}};
          p.feat_type = t;
          p.valid = valid;
          p.specials = false;
          auto in = makeDaInputs(p, rng);
          double bytes = 0;
          for (const auto& v : in) bytes += double(v.data.size());
          bytes += double(p.B * p.A * p.C) * dtypeSize(t);
          std::vector<TensorValue> in64;
          for (const auto& v : in) in64.push_back(convert(v, DataType::kFloat64));
          TensorValue want = reference("opforge::DeformableAggregation", {}, in64);
          char cfg[96];
          std::snprintf(cfg, sizeof cfg, "A %lld, %d%% valid", static_cast<long long>(anchors),
                        static_cast<int>(valid * 100 + 0.5));
          b.run(
              "opforge::DeformableAggregation", cfg, {}, in, bytes,
              [&](const std::vector<TensorValue>& out) { return errors(out[0], want); }, false,
              /*graph=*/true, "eager: includes the table-check read-back");
        }
      }
    }
  }
  b.print();
  if (!o.json.empty()) b.writeJson(o.json);
  return 0;
}
