// opforge — the command-line tool: build and run plans (trtexec's habits), inspect plans, list ops.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "common/checked.h"
#include "graph/graph.h"
#include "new_op.h"
#include "npy.h"
#include "opforge/builder.h"
#include "opforge/device.h"
#include "opforge/io.h"
#include "opforge/network.h"
#include "opforge/runtime.h"
#include "opforge/version.h"

namespace {

using namespace opforge;

constexpr const char* kFooter = R"(
Examples:
  opforge exec --onnx=examples/circ_pad/circ_pad.onnx --plugins=build/lib/libopforge_ops.so
  opforge exec --onnx=model.onnx --minShapes=x:1x3x8x8 --optShapes=x:4x3x8x8 --maxShapes=x:16x3x8x8 \
               --saveEngine=model.plan
  opforge exec --loadEngine=model.plan --plugins=build/lib/libopforge_ops.so --shapes=x:2x3x8x8 \
               --loadInputs=x:x.npy --saveOutputs=out/
  opforge inspect model.plan --plugins=build/lib/libopforge_ops.so
  opforge ops --plugins=build/lib/libopforge_ops.so
  opforge new-op myops::roi_align --dir ~/src --cuda

Exit status: 0 on success, 1 on any error (the message names the file, node, op and value).
)";

// What the command is doing, for the message when an exception reaches the command boundary.
std::string g_activity = "starting";

[[noreturn]] void fail(const Status& st) {
  std::cerr << "opforge: error: " << st.message() << "\n";
  std::exit(1);
}

template <typename T>
T orFail(Result<T> r) {
  if (!r) fail(r.status());
  return std::move(r).value();
}

void check(const Status& st) {
  if (!st) fail(st);
}

std::vector<std::string> splitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream ss(s);
  while (std::getline(ss, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

// "x:1x3x8x8,y:2x2" -> {x: [1,3,8,8], y: [2,2]}. Names may contain ':' (the last one splits).
Result<std::map<std::string, std::vector<int64_t>>> parseShapes(const std::string& flag,
                                                                const std::string& text) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& item : splitList(text, ',')) {
    size_t c = item.rfind(':');
    if (c == std::string::npos || c == 0)
      return Status::invalid(flag + ": '" + item + "' is not NAME:DIMS (e.g. " + flag +
                             "=x:1x3x224x224)");
    auto dims = parseDims(item.substr(c + 1));
    if (!dims) return dims.status().withContext(flag);
    out[item.substr(0, c)] = *dims;
  }
  return out;
}

Result<std::map<std::string, std::string>> parsePairs(const std::string& flag,
                                                      const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& item : splitList(text, ',')) {
    size_t c = item.find(':');
    if (c == std::string::npos || c == 0)
      return Status::invalid(flag + ": '" + item + "' is not NAME:FILE");
    out[item.substr(0, c)] = item.substr(c + 1);
  }
  return out;
}

// "LayerNormalization:fp32,*/attn/*:fp32" -> the patterns kept in FP32 (trtexec's
// --layerPrecisions; only fp32 can be asked for: --fp16/--bf16 choose the reduced precision
// everywhere else).
Result<std::vector<std::string>> parseLayerPrecisions(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& item : splitList(text, ',')) {
    const size_t c = item.rfind(':');  // op names hold "::"; the last ':' splits
    if (c == std::string::npos || c == 0)
      return Status::invalid("--layerPrecisions: '" + item + "' is not PATTERN:fp32");
    if (item.substr(c + 1) != "fp32")
      return Status::invalid("--layerPrecisions: '" + item + "' asks for " + item.substr(c + 1) +
                             "; only fp32 can be pinned (--fp16/--bf16 lower the other layers)");
    out.push_back(item.substr(0, c));
  }
  return out;
}

// "fp32:hwc,fp16:chw" -> formats per position.
Result<std::vector<Format>> parseIOFormats(const std::string& flag, const std::string& text) {
  std::vector<Format> out;
  for (const auto& item : splitList(text, ',')) {
    size_t c = item.find(':');
    std::string f = c == std::string::npos ? item : item.substr(c + 1);
    std::transform(f.begin(), f.end(), f.begin(), ::tolower);
    if (f == "chw" || f == "linear")
      out.push_back(Format::kLinear);
    else if (f == "hwc")
      out.push_back(Format::kHWC);
    else
      return Status::invalid(flag + ": format '" + f + "' is not one of linear, chw, hwc");
  }
  return out;
}

// Logical (row-major) <-> physical (format) order on the host.
std::vector<uint8_t> toPhysical(const TensorDesc& d, const uint8_t* logical, bool inverse) {
  std::vector<uint8_t> out(d.bytes());
  const size_t es = dtypeSize(d.dtype);
  TensorDesc lin = d;
  lin.format = Format::kLinear;
  std::vector<int64_t> idx(d.rank(), 0);
  for (int64_t i = 0; i < d.numel(); ++i) {
    int64_t p = physicalOffset(d, idx.data());
    if (!inverse)
      std::memcpy(out.data() + p * es, logical + i * es, es);
    else
      std::memcpy(out.data() + i * es, logical + p * es, es);
    for (int a = d.rank() - 1; a >= 0; --a) {
      if (++idx[a] < d.dims[a]) break;
      idx[a] = 0;
    }
  }
  return out;
}

std::vector<uint8_t> randomData(const TensorDesc& d, std::mt19937_64& rng) {
  std::vector<uint8_t> out(d.bytes());
  std::uniform_real_distribution<double> uf(-1.0, 1.0);
  std::uniform_int_distribution<int> ui(-4, 4), ub(0, 1), uu(0, 8);
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v;
    if (isFloatType(d.dtype))
      v = uf(rng);
    else if (d.dtype == DataType::kBool)
      v = ub(rng);
    else if (d.dtype == DataType::kUInt8 || d.dtype == DataType::kUInt16 ||
             d.dtype == DataType::kUInt32 || d.dtype == DataType::kUInt64)
      v = uu(rng);
    else
      v = ui(rng);
    storeFromDouble(out.data(), d.dtype, i, v);
  }
  return out;
}

struct Stats {
  double min = 0, max = 0, mean = 0, median = 0, p90 = 0, p95 = 0, p99 = 0;
};
Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) {
    size_t i = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / v.size();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  s.p90 = pct(90);
  s.p95 = pct(95);
  s.p99 = pct(99);
  return s;
}

std::string fmtStats(const Stats& s) {
  char buf[256];
  std::snprintf(
      buf, sizeof(buf),
      "min = %.5f ms, max = %.5f ms, mean = %.5f ms, median = %.5f ms, "
      "percentile(90%%) = %.5f ms, percentile(95%%) = %.5f ms, percentile(99%%) = %.5f ms",
      s.min, s.max, s.mean, s.median, s.p90, s.p95, s.p99);
  return buf;
}

std::string sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s;
}

// Physical memory of this machine in bytes (0 when unknown).
uint64_t hostMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// An input of `dims` must have a byte count that fits in 64 bits and in this machine's memory,
// before anything is allocated for it (random data, a profile's buffers).
Status checkInputSize(const std::string& where, const std::string& name, DataType dtype,
                      const std::vector<int64_t>& dims) {
  auto bytes = checked::bytes(dims, dtypeSize(dtype));
  if (!bytes)
    return Status::outOfRange(where + ": input '" + name + "' of shape " + dimsToString(dims) +
                              " (" + dtypeName(dtype) +
                              ") has more elements or bytes than fit in 64 bits");
  const uint64_t host = hostMemoryBytes();
  if (host && static_cast<uint64_t>(*bytes) > host)
    return Status::outOfRange(where + ": input '" + name + "' of shape " + dimsToString(dims) +
                              " (" + dtypeName(dtype) + ") needs " + std::to_string(*bytes) +
                              " bytes; this machine has " + std::to_string(host) +
                              " bytes of memory");
  return Status::ok();
}

// Writes every file or none: each goes to a temporary name first, then all are renamed; on any
// failure the temporaries (and files already renamed) are removed.
Status writeAllOrNothing(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& files) {
  const std::string suffix = ".partial-" + std::to_string(::getpid());
  for (const auto& [path, bytes] : files) {
    struct stat sb;
    if (::lstat(path.c_str(), &sb) == 0 && !S_ISREG(sb.st_mode))
      return Status::io("cannot write '" + path + "': something that is not a file is there");
  }
  std::vector<std::string> temps, done;
  auto undo = [&](Status st) {
    for (const auto& t : temps) ::unlink(t.c_str());
    for (const auto& d : done) ::unlink(d.c_str());
    return st;
  };
  for (const auto& [path, bytes] : files) {
    Status st = writeFileAtomic(path + suffix, bytes);
    if (!st) return undo(Status::io("cannot write '" + path + "': " + st.message()));
    temps.push_back(path + suffix);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      const int e = errno;
      return undo(Status::io("cannot write '" + files[i].first + "': " + std::strerror(e) +
                             "; no output file was written"));
    }
    done.push_back(files[i].first);
    temps[i].clear();
  }
  return Status::ok();
}

void loadPlugins(const std::vector<std::string>& libs, bool verbose) {
  for (const auto& l : libs) {
    g_activity = "loading op library " + l;
    check(Registry::global()->loadLibrary(l));
    if (verbose) std::cout << "[I] loaded op library " << l << "\n";
  }
}

struct ExecOptions {
  std::string onnx, save_engine, load_engine;
  std::vector<std::string> plugins;
  std::string shapes, min_shapes, opt_shapes, max_shapes;
  std::string input_formats, output_formats;
  std::string load_inputs, save_outputs, export_output, export_times, export_profile, export_trace,
      device = "auto";
  std::string timing_cache, layer_precisions, layer_tactics, disable_passes;
  bool fp16 = false, bf16 = false, no_tf32 = false, no_cuda_graph = false;
  int iterations = 10, max_loop_iterations = 64;
  double warmup_ms = 200, duration_s = 3;
  uint64_t seed = 1;
  bool verbose = false, skip_inference = false, dump_profile = false, dump_output = false;
};

int runExec(const ExecOptions& o) {
  loadPlugins(o.plugins, o.verbose);
  if (o.onnx.empty() == o.load_engine.empty())
    fail(Status::invalid(
        "give exactly one of --onnx=MODEL (build a plan) or --loadEngine=PLAN (load one)"));
  if (o.device != "cpu" && o.device != "auto" && o.device != "cuda")
    fail(Status::invalid("--device must be cpu, cuda or auto, got '" + o.device + "'"));
  Backend backend = Backend::kCpu;
  if (o.device != "cpu") {
    auto dev = cudaDeviceInfo();
    if (dev) {
      backend = Backend::kCuda;
      std::cout << "[I] device: " << dev->describe() << "\n";
    } else if (o.device == "cuda") {
      fail(dev.status().withContext("--device=cuda"));
    } else {
      std::cout << "[I] --device=auto: " << dev.status().message() << "; running on the CPU\n";
    }
  }
  auto shapes = orFail(parseShapes("--shapes", o.shapes));
  // Input data is read first: with a model of dynamic inputs, the files give the shapes.
  auto inputs = orFail(parsePairs("--loadInputs", o.load_inputs));
  std::map<std::string, TensorValue> loaded;
  for (const auto& [name, file] : inputs) {
    g_activity = "reading input '" + name + "' from " + file;
    loaded[name] = orFail(npy::read(file));
  }

  std::shared_ptr<Engine> engine;
  if (!o.onnx.empty()) {
    auto t0 = std::chrono::steady_clock::now();
    g_activity = "importing " + o.onnx;
    OnnxImportOptions import_options;
    import_options.max_dynamic_loop_iterations = o.max_loop_iterations;
    NetworkDefinition net = orFail(importOnnx(o.onnx, Registry::global(), import_options));
    std::cout << "[I] parsed " << o.onnx << ": " << net.numNodes() << " nodes\n";
    auto in_fmt = orFail(parseIOFormats("--inputIOFormats", o.input_formats));
    auto out_fmt = orFail(parseIOFormats("--outputIOFormats", o.output_formats));
    BuilderConfig cfg;
    cfg.log = [](const std::string& m) { std::cout << "[I] " << m << "\n"; };
    cfg.verbose = o.verbose;
    cfg.backend = backend;
    cfg.fp16 = o.fp16;
    cfg.bf16 = o.bf16;
    cfg.tf32 = !o.no_tf32;
    cfg.fp32_layers = orFail(parseLayerPrecisions(o.layer_precisions));
    if (!cfg.fp32_layers.empty() && !o.fp16 && !o.bf16)
      fail(Status::invalid(
          "--layerPrecisions keeps layers in FP32 under --fp16/--bf16; neither is given"));
    for (const auto& item : splitList(o.layer_tactics, ',')) cfg.layer_tactics.push_back(item);
    for (const auto& item : splitList(o.disable_passes, ',')) cfg.disabled_passes.push_back(item);
    cfg.timing_cache_file = o.timing_cache;
    if (::isatty(STDOUT_FILENO)) {
      cfg.progress = [](int done, int total, const std::string& layer, int tried) {
        std::printf("\r[I] timing layer %d/%d %-40.40s (%d tactics tried)", done, total,
                    layer.c_str(), tried);
        if (done == total) std::printf("\n");
        std::fflush(stdout);
      };
    }
    auto mins = orFail(parseShapes("--minShapes", o.min_shapes));
    auto opts = orFail(parseShapes("--optShapes", o.opt_shapes));
    auto maxs = orFail(parseShapes("--maxShapes", o.max_shapes));
    OptimizationProfile prof;
    std::set<std::string> names;
    for (auto* m : {&mins, &opts, &maxs, &shapes})
      for (auto& [k, v] : *m) names.insert(k);
    for (const auto& n : names) {
      ShapeRange r;
      if (mins.count(n) || opts.count(n) || maxs.count(n)) {
        if (!mins.count(n) || !opts.count(n) || !maxs.count(n))
          fail(Status::invalid("input '" + n +
                               "': give all three of --minShapes, --optShapes and --maxShapes"));
        r = ShapeRange{mins[n], opts[n], maxs[n]};
      } else {
        r = ShapeRange{shapes[n], shapes[n], shapes[n]};
      }
      prof.inputs[n] = r;
    }
    // trtexec's habits for dynamic inputs without shapes: a loaded input's own shape, else every
    // unknown dimension set to 1, said so.
    for (int id : net.graph().inputs) {
      const graph::Value& v = net.graph().values[id];
      const bool dynamic =
          std::any_of(v.dims.begin(), v.dims.end(), [](const DimExpr& d) { return !d.isConst(); });
      if (!dynamic || prof.inputs.count(v.name)) continue;
      std::vector<int64_t> dims;
      if (loaded.count(v.name)) {
        dims = loaded[v.name].desc.dims;
        std::cout << "[I] input '" << v.name << "' " << toString(v.dims) << ": using the shape of "
                  << inputs[v.name] << " (" << dimsToString(dims) << ") as the profile\n";
      } else {
        for (const auto& d : v.dims) dims.push_back(d.isConst() ? d.constValue() : 1);
        std::cout << "[W] input '" << v.name << "' has dynamic dimensions " << toString(v.dims)
                  << " and no shapes were given: overriding them to " << dimsToString(dims)
                  << " (set them with --shapes=" << v.name
                  << ":DIMS, or --minShapes/--optShapes/--maxShapes)\n";
      }
      prof.inputs[v.name] = ShapeRange{dims, dims, dims};
    }
    for (const auto& [n, r] : prof.inputs) {
      const int id = net.graph().findValue(n);
      if (id < 0 || !net.graph().values[id].is_input) continue;  // the builder names it
      for (const auto* d : {&r.min, &r.opt, &r.max})
        check(checkInputSize("optimization profile", n, net.graph().values[id].dtype, *d));
    }
    if (!prof.inputs.empty()) cfg.profiles.push_back(prof);
    // I/O formats apply to the network's inputs / outputs in order.
    const std::vector<std::string> in_names = net.inputNames(), out_names = net.outputNames();
    if (!in_fmt.empty() && in_fmt.size() != in_names.size())
      fail(Status::invalid("--inputIOFormats lists " + std::to_string(in_fmt.size()) +
                           " formats for " + std::to_string(in_names.size()) + " inputs"));
    if (!out_fmt.empty() && out_fmt.size() != out_names.size())
      fail(Status::invalid("--outputIOFormats lists " + std::to_string(out_fmt.size()) +
                           " formats for " + std::to_string(out_names.size()) + " outputs"));
    for (size_t i = 0; i < in_fmt.size(); ++i) check(net.setInputFormat(in_names[i], in_fmt[i]));
    for (size_t i = 0; i < out_fmt.size(); ++i)
      check(net.setOutputFormat(out_names[i], out_fmt[i]));
    Builder builder(Registry::global());
    g_activity = "building " + o.onnx;
    auto bytes = orFail(builder.buildSerializedNetwork(net, cfg));
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[I] engine built in " << ms << " ms\n";
    if (!o.save_engine.empty()) {
      check(writeFileAtomic(o.save_engine, bytes));
      std::cout << "[I] saved engine to " << o.save_engine << " (" << bytes.size() << " bytes)\n";
    }
    engine = orFail(Engine::loadMemory(std::move(bytes), o.onnx + " (built)", Registry::global()));
  } else {
    g_activity = "loading " + o.load_engine;
    engine = orFail(Engine::loadFile(o.load_engine, Registry::global()));
    std::cout << "[I] loaded engine " << o.load_engine << " (" << engine->deviceDescription()
              << ")\n";
    if (o.device == "cpu" && engine->backend() == Backend::kCuda)
      fail(Status::invalid("--device=cpu, but " + o.load_engine +
                           " is a CUDA plan; rebuild it with --device=cpu"));
    if (!o.save_engine.empty())
      fail(Status::invalid("--saveEngine needs --onnx (a loaded plan is already saved)"));
  }
  if (o.skip_inference) {
    std::cout << "[I] --skipInference: not running\n";
    return 0;
  }

  g_activity = "setting up inputs of " + engine->name();
  auto ctx = orFail(engine->createExecutionContext());
  for (const auto& [name, v] : shapes) {
    bool is_input = false;
    for (const auto& io : engine->ioTensors()) is_input |= io.is_input && io.name == name;
    if (!is_input)
      fail(Status::invalid("--shapes names '" + name + "', which is not an input of the engine"));
  }
  for (const auto& [name, file] : inputs) {
    bool is_input = false;
    for (const auto& io : engine->ioTensors()) is_input |= io.is_input && io.name == name;
    if (!is_input)
      fail(Status::invalid("--loadInputs names '" + name +
                           "', which is not an input of the engine"));
  }
  std::mt19937_64 rng(o.seed);
  bool random_used = false;
  // All shapes first (a context plans its memory once every shape is known), then the data.
  std::map<std::string, std::vector<int64_t>> run_dims;
  for (const auto& io : engine->ioTensors()) {
    if (!io.is_input) continue;
    std::vector<int64_t> dims;
    bool dynamic = std::any_of(io.dims.begin(), io.dims.end(), [](int64_t d) { return d < 0; });
    if (shapes.count(io.name)) {
      dims = shapes[io.name];
    } else if (loaded.count(io.name) && dynamic) {
      dims = loaded[io.name].desc.dims;
    } else if (dynamic) {
      auto ps = orFail(engine->profileShapes(0, io.name));
      dims = ps[1];  // opt, as trtexec does
    } else {
      dims = io.dims;
    }
    check(checkInputSize("--shapes", io.name, io.dtype, dims));
    check(ctx->setInputShape(io.name, dims));
    run_dims[io.name] = dims;
  }
  for (const auto& io : engine->ioTensors()) {
    if (!io.is_input) continue;
    const std::vector<int64_t>& dims = run_dims[io.name];
    TensorDesc desc{io.dtype, dims, io.format};
    std::vector<uint8_t> logical;
    if (loaded.count(io.name)) {
      const TensorValue& t = loaded[io.name];
      if (t.desc.dtype != io.dtype)
        fail(Status::invalid("input '" + io.name + "' is " + dtypeName(io.dtype) + " but " +
                             inputs[io.name] + " holds " + dtypeName(t.desc.dtype) +
                             " (numpy dtype " + npy::descr(t.desc.dtype) + ")"));
      if (t.desc.dims != dims)
        fail(Status::invalid("input '" + io.name + "' has shape " + dimsToString(dims) + " but " +
                             inputs[io.name] + " holds " + dimsToString(t.desc.dims)));
      logical = t.data;
      std::cout << "[I] input '" << io.name << "': " << describe(desc) << " from "
                << inputs[io.name] << "\n";
    } else {
      logical = randomData(desc, rng);
      random_used = true;
      std::cout << "[I] input '" << io.name << "': " << describe(desc)
                << " filled with random data (seed " << o.seed << ")\n";
    }
    std::vector<uint8_t> phys =
        io.format == Format::kLinear ? logical : toPhysical(desc, logical.data(), false);
    check(ctx->setInput(io.name, phys.data(), phys.size()));
  }
  if (random_used)
    std::cout << "[I] random inputs use seed " << o.seed << " (--seed=N to change)\n";

  const bool profile_layers =
      o.dump_profile || !o.export_profile.empty() || !o.export_trace.empty();
  ctx->setUseCudaGraph(!o.no_cuda_graph);
  // Warm-up, then timed runs until both --iterations and --duration are satisfied. Per-layer
  // profiling runs are separate, so that they do not disturb the latency figures.
  using clock = std::chrono::steady_clock;
  g_activity = "running " + engine->name();
  auto wstart = clock::now();
  int warm = 0;
  do {
    check(ctx->execute());
    ++warm;
  } while (std::chrono::duration<double, std::milli>(clock::now() - wstart).count() < o.warmup_ms);
  std::vector<double> lat, enq, h2d, compute, d2h;
  bool graph_used = false;
  auto start = clock::now();
  while (static_cast<int>(lat.size()) < o.iterations ||
         std::chrono::duration<double>(clock::now() - start).count() < o.duration_s) {
    auto t0 = clock::now();
    check(ctx->enqueue(nullptr));
    auto t1 = clock::now();
    check(ctx->synchronize());
    auto t2 = clock::now();
    const RunTimes& rt = ctx->lastRunTimes();
    graph_used |= rt.cuda_graph;
    enq.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (engine->backend() == Backend::kCuda) {
      h2d.push_back(rt.h2d_ms);
      compute.push_back(rt.compute_ms);
      d2h.push_back(rt.d2h_ms);
      lat.push_back(rt.h2d_ms + rt.compute_ms + rt.d2h_ms);
    } else {
      compute.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
      lat.push_back(compute.back());
    }
  }
  double wall = std::chrono::duration<double>(clock::now() - start).count();
  const bool cuda = engine->backend() == Backend::kCuda;
  double total_compute = 0;
  for (double x : compute) total_compute += x;
  std::cout << "=== Performance summary (device: " << engine->deviceDescription() << ") ===\n";
  std::printf("[I] Throughput: %.3f qps\n", lat.size() / wall);
  std::printf("[I] Latency: %s\n", fmtStats(stats(lat)).c_str());
  std::printf("[I] Enqueue Time: %s\n", fmtStats(stats(enq)).c_str());
  if (cuda) {
    std::printf("[I] H2D Latency: %s\n", fmtStats(stats(h2d)).c_str());
    std::printf("[I] GPU Compute Time: %s\n", fmtStats(stats(compute)).c_str());
    std::printf("[I] D2H Latency: %s\n", fmtStats(stats(d2h)).c_str());
  } else {
    std::printf("[I] Compute Time: %s\n", fmtStats(stats(compute)).c_str());
  }
  std::printf("[I] Total Host Walltime: %.5f s\n", wall);
  std::printf("[I] Total %s Compute Time: %.5f s\n", cuda ? "GPU" : "CPU", total_compute / 1000.0);
  std::printf("[I] Iterations: %zu timed, %d warm-up%s\n", lat.size(), warm,
              cuda ? (graph_used ? "; CUDA graph replay" : "; no CUDA graph") : "");
  if (!o.export_times.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (size_t i = 0; i < lat.size(); ++i) {
      nlohmann::json e = {{"iteration", i},
                          {"latencyMs", lat[i]},
                          {"enqueueMs", enq[i]},
                          {"computeMs", compute[i]}};
      if (cuda) {
        e["h2dMs"] = h2d[i];
        e["d2hMs"] = d2h[i];
      }
      j.push_back(e);
    }
    std::string text = j.dump(2);
    check(writeFileAtomic(o.export_times, std::vector<uint8_t>(text.begin(), text.end())));
    std::cout << "[I] wrote " << o.export_times << "\n";
  }
  if (profile_layers) {
    ctx->setProfiling(true);
    std::map<std::string, std::vector<double>> layer_ms;
    std::vector<std::string> layer_order;
    std::vector<LayerTime> last;
    const int runs = std::max(10, o.iterations);
    for (int i = 0; i < runs; ++i) {
      check(ctx->execute());
      last = ctx->layerTimes();
      for (const auto& l : last) {
        if (!layer_ms.count(l.name)) layer_order.push_back(l.name);
        layer_ms[l.name].push_back(l.ms);
      }
    }
    ctx->setProfiling(false);
    double sum = 0;
    for (const auto& n : layer_order)
      for (double x : layer_ms[n]) sum += x;
    // Each layer's kind (conv, gemm, attention, reformat, cast, ...: the op's OpSchema::kind);
    // reformats and casts the builder inserted show as such.
    std::map<std::string, std::string> kind_of;
    for (const auto& l : engine->layers()) kind_of[l.name] = l.kind.empty() ? "other" : l.kind;
    nlohmann::json prof = nlohmann::json::array();
    prof.push_back({{"count", runs}});
    if (o.dump_profile) {
      std::printf("=== Profile (%d iterations, %s time per layer) ===\n", runs,
                  cuda ? "GPU" : "CPU");
      std::printf("%-44s %-13s %12s %12s %12s %7s\n", "Layer", "Kind", "Total (ms)", "Average (ms)",
                  "Median (ms)", "%");
    }
    std::map<std::string, std::pair<double, int>> by_kind;  // kind -> (total ms, layers)
    for (const auto& n : layer_order) {
      auto v = layer_ms[n];
      double t = 0;
      for (double x : v) t += x;
      Stats st = stats(v);
      const std::string kind = kind_of.count(n) ? kind_of[n] : std::string("other");
      by_kind[kind].first += t;
      ++by_kind[kind].second;
      if (o.dump_profile)
        std::printf("%-44.44s %-13.13s %12.4f %12.6f %12.6f %7.1f\n", n.c_str(), kind.c_str(), t,
                    t / v.size(), st.median, sum > 0 ? 100.0 * t / sum : 0.0);
      prof.push_back({{"name", n},
                      {"kind", kind},
                      {"timeMs", t},
                      {"averageMs", t / v.size()},
                      {"medianMs", st.median},
                      {"percentage", sum > 0 ? 100.0 * t / sum : 0.0}});
    }
    if (o.dump_profile) {
      std::printf("%-44s %-13s %12.4f %12.6f\n", "Total", "", sum, sum / runs);
      std::vector<std::pair<std::string, std::pair<double, int>>> kinds(by_kind.begin(),
                                                                        by_kind.end());
      std::sort(kinds.begin(), kinds.end(),
                [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
      std::printf("=== %s time by layer kind ===\n", cuda ? "GPU" : "CPU");
      std::printf("%-13s %7s %12s %7s\n", "Kind", "Layers", "Average (ms)", "%");
      for (const auto& [k, v] : kinds)
        std::printf("%-13s %7d %12.6f %7.1f\n", k.c_str(), v.second, v.first / runs,
                    sum > 0 ? 100.0 * v.first / sum : 0.0);
    }
    if (!o.export_profile.empty()) {
      std::string text = prof.dump(2);
      check(writeFileAtomic(o.export_profile, std::vector<uint8_t>(text.begin(), text.end())));
      std::cout << "[I] wrote " << o.export_profile << "\n";
    }
    if (!o.export_trace.empty()) {
      // Chrome trace-event format (opens in Perfetto / chrome://tracing): one complete event per
      // layer of the last profiled run, times in microseconds.
      nlohmann::json ev = nlohmann::json::array();
      ev.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", "opforge " + engine->name()}}}});
      ev.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"name", cuda ? "GPU stream" : "CPU"}}}});
      auto layers = engine->layers();
      for (size_t k = 0; k < last.size(); ++k) {
        nlohmann::json args = {{"op", k < layers.size() ? layers[k].op : ""},
                               {"tactic", k < layers.size() ? layers[k].tactic : ""}};
        ev.push_back({{"name", last[k].name},
                      {"cat", "layer"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", last[k].start_ms * 1000.0},
                      {"dur", last[k].ms * 1000.0},
                      {"args", args}});
      }
      nlohmann::json trace = {{"traceEvents", ev}, {"displayTimeUnit", "ms"}};
      std::string text = trace.dump(1);
      check(writeFileAtomic(o.export_trace, std::vector<uint8_t>(text.begin(), text.end())));
      std::cout << "[I] wrote " << o.export_trace << " (open it in https://ui.perfetto.dev)\n";
    }
  }

  // Outputs.
  nlohmann::json outj = nlohmann::json::array();
  std::vector<std::pair<std::string, TensorValue>> results;
  for (const auto& io : engine->ioTensors()) {
    if (io.is_input) continue;
    Tensor t = orFail(ctx->output(io.name));
    TensorValue v;
    v.desc = t.desc;
    v.desc.format = Format::kLinear;
    const auto* p = static_cast<const uint8_t*>(t.data);
    v.data = t.desc.format == Format::kLinear ? std::vector<uint8_t>(p, p + t.bytes())
                                              : toPhysical(t.desc, p, true);
    std::cout << "[I] output '" << io.name << "': " << describe(v.desc) << "\n";
    if (o.dump_output) {
      std::cout << "     ";
      for (int64_t i = 0; i < std::min<int64_t>(v.desc.numel(), 16); ++i)
        std::cout << loadAsDouble(v.data.data(), v.desc.dtype, i) << " ";
      if (v.desc.numel() > 16) std::cout << "...";
      std::cout << "\n";
    }
    results.emplace_back(io.name, std::move(v));
  }
  if (!o.save_outputs.empty()) {
    g_activity = "writing outputs to " + o.save_outputs;
    struct stat sb;
    bool made = false;
    if (::stat(o.save_outputs.c_str(), &sb) != 0) {
      if (::mkdir(o.save_outputs.c_str(), 0755) != 0)
        fail(Status::io("--saveOutputs: cannot create folder '" + o.save_outputs +
                        "': " + std::strerror(errno)));
      made = true;
    }
    // All outputs or none: a failed run leaves no part of its results behind.
    std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
    for (const auto& [name, v] : results)
      files.emplace_back(o.save_outputs + "/" + sanitize(name) + ".npy",
                         npy::encode(v.desc, v.data.data()));
    Status st = writeAllOrNothing(files);
    if (!st) {
      if (made) ::rmdir(o.save_outputs.c_str());
      fail(st.withContext("--saveOutputs"));
    }
    for (const auto& f : files) std::cout << "[I] wrote " << f.first << "\n";
  }
  if (!o.export_output.empty()) {
    for (const auto& [name, v] : results) {
      nlohmann::json vals = nlohmann::json::array();
      const bool integral = !isFloatType(v.desc.dtype);
      for (int64_t i = 0; i < v.desc.numel(); ++i) {
        double x = loadAsDouble(v.data.data(), v.desc.dtype, i);
        if (integral)
          vals.push_back(static_cast<int64_t>(x));
        else
          vals.push_back(x);
      }
      outj.push_back({{"name", name},
                      {"dimensions", dimsToString(v.desc.dims)},
                      {"dtype", dtypeName(v.desc.dtype)},
                      {"values", vals}});
    }
    std::string text = outj.dump(2);
    check(writeFileAtomic(o.export_output, std::vector<uint8_t>(text.begin(), text.end())));
    std::cout << "[I] wrote " << o.export_output << "\n";
  }
  return 0;
}

int runInspect(const std::string& plan, const std::vector<std::string>& plugins) {
  loadPlugins(plugins, false);
  auto engine = orFail(Engine::loadFile(plan, Registry::global()));
  std::cout << engine->inspect();
  return 0;
}

int runOps(const std::vector<std::string>& plugins, const std::string& filter) {
  loadPlugins(plugins, false);
  for (const RegisteredOp* op : Registry::global()->ops()) {
    const OpSchema& s = op->schema();
    if (!filter.empty() && s.key().find(filter) == std::string::npos) continue;
    std::cout << s.key() << " v" << s.version << "   [" << op->library().path << "]\n";
    if (!s.doc.empty()) std::cout << "    " << s.doc << "\n";
    std::cout << "    kind   " << s.layerKind() << "\n";
    for (const auto& i : s.inputs)
      std::cout << "    input  " << i.name << (i.optional ? " (optional)" : "")
                << (i.variadic ? " (variadic)" : "") << (i.doc.empty() ? "" : ": " + i.doc) << "\n";
    for (const auto& i : s.outputs)
      std::cout << "    output " << i.name << (i.doc.empty() ? "" : ": " + i.doc) << "\n";
    for (const auto& a : s.attrs)
      std::cout << "    attr   " << a.name << ": " << attrTypeName(a.type)
                << (a.default_value ? " = " + attrToString(*a.default_value)
                    : a.optional    ? " (optional)"
                                    : " (required)")
                << (a.doc.empty() ? "" : "  -- " + a.doc) << "\n";
    for (const auto& c : s.combos)
      std::cout << "    combination \"" << c.types << "\" in \""
                << (c.formats.empty() ? "LINEAR" : c.formats) << "\"\n";
    for (const auto& t : s.tactics)
      std::cout << "    tactic " << t.id << ": " << t.name
                << (t.backend == Backend::kCuda ? " (CUDA" : " (CPU")
                << (t.tf32 ? ", TF32: only when the build allows TF32)" : ")") << "\n";
    for (const auto& a : s.aliases) std::cout << "    alias  " << a << "\n";
  }
  return 0;
}

// The namespaces of the shipped ops: the built-in ones and those of the contrib library beside
// the libopforge.so this command runs with (build/lib, or the install prefix's lib/).
std::vector<std::string> shippedNamespaces() {
  std::set<std::string> ns;
  auto collect = [&](Registry& r) {
    for (const RegisteredOp* op : r.ops()) {
      const std::string key = op->schema().key();
      const size_t sep = key.find("::");
      if (sep != std::string::npos) ns.insert(key.substr(0, sep));
    }
  };
  collect(*Registry::global());
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&Registry::create), &info) && info.dli_fname) {
    const auto contrib =
        std::filesystem::absolute(info.dli_fname).parent_path() / "libopforge_ops.so";
    std::error_code ec;
    if (std::filesystem::exists(contrib, ec)) {
      auto reg = Registry::create();
      if (reg->loadLibrary(contrib.string())) collect(*reg);
    }
  }
  return {ns.begin(), ns.end()};
}

int runNewOp(const cli::NewOpOptions& o) {
  g_activity = "writing the skeleton of " + o.key;
  auto r = orFail(cli::newOp(o, shippedNamespaces()));
  std::cout << "opforge new-op: wrote " << r.folder
            << (r.in_tree ? " (inside opforge's tree: ops/contrib)" : " (a project of its own)")
            << "\n";
  for (const auto& f : r.files) std::cout << "  " << f << "\n";
  std::cout << "A skeleton: the CPU reference is the identity (y = x) and the test checks the "
               "reference only"
            << (o.cuda ? "; the CUDA tactic is inside #if 0 until it is written" : "")
            << ". Next: the TODOs, then README.md's build steps.\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "opforge " OPFORGE_VERSION_STRING
      " — custom GPU operators from one definition: build ONNX models into plans and run them"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("opforge ") + OPFORGE_VERSION_STRING);

  ExecOptions o;
  auto* exec = app.add_subcommand(
      "exec", "Build an ONNX model into a plan (or load a plan) and run it, like trtexec");
  exec->add_option("--onnx", o.onnx, "ONNX model to build")->check(CLI::ExistingFile);
  exec->add_option("--plugins,--staticPlugins,--dynamicPlugins", o.plugins,
                   "Op library to load (repeatable), e.g. build/lib/libopforge_ops.so");
  exec->add_option("--saveEngine", o.save_engine, "Write the built plan to this file");
  exec->add_option("--loadEngine", o.load_engine, "Load a plan instead of building one");
  exec->add_option("--shapes", o.shapes,
                   "Input shapes to run with: name:1x3x224x224[,name2:...] (also a static profile "
                   "when building)");
  exec->add_option("--minShapes", o.min_shapes,
                   "Optimization profile minimum shapes: name:dims[,...]");
  exec->add_option("--optShapes", o.opt_shapes,
                   "Optimization profile shapes to tune for: name:dims[,...]");
  exec->add_option("--maxShapes", o.max_shapes,
                   "Optimization profile maximum shapes: name:dims[,...]");
  exec->add_option("--inputIOFormats", o.input_formats,
                   "Formats of the inputs, in order: fp32:chw,fp32:hwc,...");
  exec->add_option("--outputIOFormats", o.output_formats, "Formats of the outputs, in order");
  exec->add_option("--loadInputs", o.load_inputs,
                   "Input data from .npy files: name:file.npy[,name2:file2.npy]; missing inputs "
                   "get seeded random data");
  exec->add_option("--saveOutputs", o.save_outputs, "Write every output as DIR/<name>.npy");
  exec->add_option("--exportOutput", o.export_output,
                   "Write the outputs as JSON (trtexec's layout)");
  exec->add_option("--exportTimes", o.export_times,
                   "Write every timed iteration's latency as JSON");
  exec->add_option("--exportProfile", o.export_profile,
                   "Write per-layer times as JSON (implies per-layer profiling runs)");
  exec->add_option("--exportTrace", o.export_trace,
                   "Write the per-layer timeline in Chrome's trace-event format (Perfetto)");
  exec->add_option("--timingCacheFile", o.timing_cache,
                   "Timing cache for CUDA builds: read if present, updated after the build");
  exec->add_flag(
      "--fp16", o.fp16,
      "Let ops run in FP16 where their combinations allow it (casts inserted at the boundaries)");
  exec->add_flag("--bf16", o.bf16, "Let ops run in BF16 where their combinations allow it");
  exec->add_option(
          "--maxLoopIterations", o.max_loop_iterations,
          "Iterations to unroll for an ONNX Loop whose trip count or condition is run-time "
          "data (1 to 4096, default 64); a run that needs more fails naming the loop")
      ->check(CLI::Range(1, 4096));
  exec->add_flag("--noTF32", o.no_tf32,
                 "Keep FP32 convolutions and GEMMs in full FP32 arithmetic (by default, as in "
                 "TensorRT, they may run on TF32 tensor cores)");
  exec->add_option("--layerPrecisions", o.layer_precisions,
                   "Keep layers in FP32 under --fp16/--bf16: PATTERN:fp32[,...]; PATTERN is a node "
                   "name with '*' "
                   "wildcards or an op (LayerNormalization, opforge::FusedAttention)");
  exec->add_option("--layerTactics", o.layer_tactics,
                   "Pick layers' tactics instead of timing them: PATTERN=TACTIC[,...]; PATTERN as "
                   "for --layerPrecisions, TACTIC an id or name from `opforge ops` (cuda.flash) or "
                   "'reference' (the CPU reference)");
  exec->add_option("--disablePasses", o.disable_passes,
                   "Graph passes not to run: NAME[,...] as `--verbose` lists them (se_fusion); "
                   "to compare a plan with and without a rewrite");
  exec->add_flag("--noCudaGraph", o.no_cuda_graph,
                 "Do not capture and replay the network as a CUDA graph");
  exec->add_option("--iterations", o.iterations, "Run at least N timed iterations (default 10)");
  exec->add_option("--warmUp", o.warmup_ms,
                   "Warm up for N milliseconds before timing (default 200)");
  exec->add_option("--duration", o.duration_s,
                   "Run timed iterations for at least N seconds (default 3)");
  exec->add_option(
      "--device", o.device,
      "cpu, cuda or auto (default auto: the GPU when there is one, else the CPU, said so)");
  exec->add_option("--seed", o.seed, "Seed of the random input data (default 1)");
  exec->add_flag("--skipInference", o.skip_inference, "Build (and save) only");
  exec->add_flag("--dumpProfile", o.dump_profile, "Print per-layer times");
  exec->add_flag("--dumpOutput", o.dump_output, "Print the first values of every output");
  exec->add_flag("--verbose,-v", o.verbose, "More messages");

  std::string plan;
  std::vector<std::string> inspect_plugins;
  auto* inspect = app.add_subcommand(
      "inspect", "Show a plan's inputs, outputs, profiles, layers, tactics and memory");
  inspect->add_option("plan", plan, "Plan file")->required();
  inspect->add_option("--plugins,--staticPlugins", inspect_plugins,
                      "Op library the plan needs (repeatable)");

  std::vector<std::string> ops_plugins;
  std::string ops_filter;
  auto* ops = app.add_subcommand(
      "ops", "List the registered ops: inputs, attributes, combinations, tactics");
  ops->add_option("--plugins,--staticPlugins", ops_plugins, "Op library to load (repeatable)");
  ops->add_option("filter", ops_filter, "Show only ops whose key contains this text");

  cli::NewOpOptions new_op;
  auto* new_op_cmd = app.add_subcommand(
      "new-op",
      "Write the skeleton of a new op (definition, CPU reference, CUDA stub, README, test): "
      "into ops/contrib/ inside opforge's tree, else as a project built against installed opforge");
  new_op_cmd->add_option("key", new_op.key, "The op's registry key, NAMESPACE::NAME")->required();
  new_op_cmd->add_option("--dir", new_op.dir,
                         "Where the op's folder goes (default: ops/contrib when run inside "
                         "opforge's tree, else the working directory)");
  new_op_cmd->add_flag("--cuda", new_op.cuda,
                       "Also write a CUDA tactic stub (<name>.cu, inside #if 0 until written)");

  // "--loadEngine=" with nothing after '=' would take the next argument as its value.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      std::cerr << "opforge: error: " << a << " has an empty value; give one after '=' (e.g. " << a
                << "VALUE) or leave the option out\n";
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  // The command boundary: nothing below is meant to throw, but an exception (an allocation that
  // does not fit, a library's bug) ends in a message and exit code 1, not in SIGABRT.
  try {
    if (*exec) return runExec(o);
    if (*inspect) return runInspect(plan, inspect_plugins);
    if (*ops) return runOps(ops_plugins, ops_filter);
    if (*new_op_cmd) return runNewOp(new_op);
  } catch (const std::bad_alloc&) {
    std::cerr << "opforge: error: out of memory while " << g_activity
              << " (an allocation did not fit in this machine's memory)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "opforge: error: unexpected failure while " << g_activity << ": " << e.what()
              << "\n";
    return 1;
  }
  return 1;
}
