#include "gpu_runner.h"
#include "../channels_last.h"
#include "../value_inputs.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace opforge::gpu {

namespace {
Status cudaOk(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::runtime(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
}
}  // namespace

bool deviceAvailable(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why)
      *why = e != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(e)
                              : "no CUDA device";
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

std::string opsLibraryPath() {
  if (const char* env = std::getenv("OPFORGE_OPS_LIBRARY")) return env;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto lib = exe.parent_path().parent_path() / "lib" / "libopforge_ops.so";
    if (std::filesystem::exists(lib, ec)) return lib.string();
  }
  return std::string(OPFORGE_BINARY_DIR) + "/lib/libopforge_ops.so";
}

std::shared_ptr<Registry> opsRegistry() {
  static std::shared_ptr<Registry> r = [] {
    auto reg = Registry::create();
    Status st = reg->loadLibrary(opsLibraryPath());
    if (!st) {
      std::fprintf(stderr, "opforge gpu: %s\n", st.message().c_str());
      return std::shared_ptr<Registry>();
    }
    return reg;
  }();
  return r;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : n_(bytes) {
  if (bytes && cudaMalloc(&p_, bytes) != cudaSuccess) {
    p_ = nullptr;
    (void)cudaGetLastError();
  }
}
DeviceBuffer::~DeviceBuffer() {
  if (p_) (void)cudaFree(p_);
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) (void)cudaFree(p_);
    p_ = o.p_;
    n_ = o.n_;
    o.p_ = nullptr;
    o.n_ = 0;
  }
  return *this;
}

Result<Prepared> prepare(Registry& reg, const std::string& key, const Attrs& attrs,
                         const std::vector<TensorValue>& inputs, int32_t tactic,
                         const RunOptions& opt) {
  const bool constants_visible = opt.constants_visible, hwc = opt.hwc;
  const RegisteredOp* op = reg.find(key);
  if (!op) return Status::notFound("op " + key + " is not registered");
  AttrMap given;
  for (const auto& [k, v] : attrs) given.set(k, v);
  OPFORGE_ASSIGN_OR_RETURN(AttrMap checked, op->validateAttrs("gpu", given));
  Prepared p;
  OPFORGE_ASSIGN_OR_RETURN(p.instance, op->instantiate("gpu", checked));
  std::vector<InferInput> ins(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins[i].present = inputs[i].desc.dtype != DataType::kUndefined;
    ins[i].desc =
        SymDesc::make(inputs[i].desc.dtype,
                      std::vector<DimExpr>(inputs[i].desc.dims.begin(), inputs[i].desc.dims.end()));
    // Like the builder: only inputs whose values the shape rule reads travel as constants.
    const auto& decl = op->schema().inputs[std::min(i, op->schema().inputs.size() - 1)];
    if (constants_visible && decl.value) {
      ins[i].constant = &inputs[i];
      ins[i].value = test::intValues(inputs[i]);
    }
  }
  OPFORGE_ASSIGN_OR_RETURN(InferResult r, op->infer("gpu", checked, ins, "gpu#"));
  std::map<std::string, int64_t> b;
  for (const auto& s : r.size_tensors) {
    OPFORGE_ASSIGN_OR_RETURN(int64_t u,
                             s.upper.eval([](const std::string&) { return std::nullopt; }));
    b[s.symbol] = u;
  }
  auto look = [&](const std::string& s) -> std::optional<int64_t> {
    auto it = b.find(s);
    return it == b.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  for (const auto& t : inputs) p.in.push_back(t.desc);
  for (const auto& o : r.outputs) {
    OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(o.dims, look));
    p.out.push_back(TensorDesc{o.dtype, dims});
    p.out_dims.push_back(o.dims);
    p.alias.push_back(o.alias);
  }
  p.sizes = r.size_tensors;
  if (hwc) {
    for (auto* ds : {&p.in, &p.out})
      for (auto& d : *ds)
        if (d.rank() >= 3) d.format = Format::kHWC;
  }
  for (size_t i = 0; i < opt.in_formats.size() && i < p.in.size(); ++i)
    if (p.in[i].rank() >= 3) p.in[i].format = opt.in_formats[i];
  for (size_t o = 0; o < opt.out_formats.size() && o < p.out.size(); ++o)
    if (p.out[o].rank() >= 3) p.out[o].format = opt.out_formats[o];
  if (!p.instance->tacticApplies(tactic, p.in, p.out, &p.workspace))
    return Status::unsupported("tactic " + std::to_string(tactic) + " of " + key +
                               " does not apply to these inputs");
  return p;
}

Result<Prepared> prepare(Registry& reg, const std::string& key, const Attrs& attrs,
                         const std::vector<TensorValue>& inputs, int32_t tactic,
                         bool constants_visible, bool hwc) {
  RunOptions opt;
  opt.constants_visible = constants_visible;
  opt.hwc = hwc;
  return prepare(reg, key, attrs, inputs, tactic, opt);
}

Result<DeviceRun> runOnDevice(Registry& reg, const std::string& key, const Attrs& attrs,
                              const std::vector<TensorValue>& inputs, int32_t tactic,
                              const RunOptions& opt) {
  OPFORGE_ASSIGN_OR_RETURN(Prepared p, prepare(reg, key, attrs, inputs, tactic, opt));
  auto offsetOf = [&](const TensorDesc& d) -> size_t {
    return opt.misalign ? dtypeSize(d.dtype) : 0;
  };
  std::vector<DeviceBuffer> in_buf, out_buf;
  std::vector<Tensor> in_t, out_t;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t off = offsetOf(inputs[i].desc);
    in_buf.emplace_back(inputs[i].data.size() + off + 16);
    if (!in_buf.back().ok())
      return Status::runtime("cudaMalloc failed for input " + std::to_string(i));
    const std::vector<uint8_t> host =
        p.in[i].format == Format::kHWC ? test::channelsLastBytes(inputs[i], true) : inputs[i].data;
    OPFORGE_RETURN_IF_ERROR(cudaOk(
        cudaMemcpy(in_buf.back().data() + off, host.data(), host.size(), cudaMemcpyHostToDevice),
        "copy input"));
    in_t.push_back(Tensor{p.in[i], in_buf.back().data() + off, Device::kCuda});
  }
  for (size_t o = 0; o < p.out.size(); ++o) {
    if (opt.in_place && p.alias[o] >= 0) {
      out_t.push_back(Tensor{p.out[o], in_t[p.alias[o]].data, Device::kCuda});
      out_buf.emplace_back();
      continue;
    }
    const size_t off = offsetOf(p.out[o]);
    out_buf.emplace_back(p.out[o].bytes() + off + 16);
    if (!out_buf.back().ok())
      return Status::runtime("cudaMalloc failed for output " + std::to_string(o));
    out_t.push_back(Tensor{p.out[o], out_buf.back().data() + off, Device::kCuda});
  }
  DeviceBuffer ws(p.workspace);
  if (!ws.ok()) return Status::runtime("cudaMalloc failed for the workspace");
  cudaStream_t stream = nullptr;
  OPFORGE_RETURN_IF_ERROR(
      cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"));
  std::unique_ptr<CUstream_st, void (*)(cudaStream_t)> stream_guard(
      stream, [](cudaStream_t s) { (void)cudaStreamDestroy(s); });
  DeviceErrorRecord* record = nullptr;
  OPFORGE_RETURN_IF_ERROR(
      cudaOk(cudaMallocHost(reinterpret_cast<void**>(&record), sizeof(*record)), "error record"));
  std::unique_ptr<DeviceErrorRecord, void (*)(DeviceErrorRecord*)> record_guard(
      record, [](DeviceErrorRecord* r) { (void)cudaFreeHost(r); });
  DeviceRun run;
  for (int rep = 0; rep < opt.repeat; ++rep) {
    std::memset(record, 0, sizeof(*record));
    // Fresh inputs for aliased outputs (in place), poisoned outputs and workspace.
    for (size_t o = 0; o < p.out.size(); ++o) {
      if (out_buf[o].size() == 0 && p.alias[o] >= 0 && opt.in_place) {
        const auto& src = inputs[p.alias[o]];
        const std::vector<uint8_t> host =
            p.in[p.alias[o]].format == Format::kHWC ? test::channelsLastBytes(src, true) : src.data;
        OPFORGE_RETURN_IF_ERROR(
            cudaOk(cudaMemcpy(out_t[o].data, host.data(), host.size(), cudaMemcpyHostToDevice),
                   "reset in-place input"));
      } else if (out_buf[o].size()) {
        OPFORGE_RETURN_IF_ERROR(
            cudaOk(cudaMemset(out_buf[o].data(), opt.poison, out_buf[o].size()), "poison output"));
      }
    }
    if (ws.size())
      OPFORGE_RETURN_IF_ERROR(
          cudaOk(cudaMemset(ws.data(), opt.poison, ws.size()), "poison workspace"));
    OPFORGE_RETURN_IF_ERROR(cudaOk(cudaDeviceSynchronize(), "before the run"));
    if (opt.capture) {
      OPFORGE_RETURN_IF_ERROR(
          cudaOk(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture"));
      run.status = p.instance->run(tactic, in_t, out_t, ws.data(), ws.size(), stream, record);
      cudaGraph_t graph = nullptr;
      OPFORGE_RETURN_IF_ERROR(
          cudaOk(cudaStreamEndCapture(stream, &graph),
                 "end capture (the tactic called an API that is not allowed during stream capture, "
                 "e.g. a synchronizing one)"));
      cudaGraphExec_t exec = nullptr;
      Status st = cudaOk(cudaGraphInstantiate(&exec, graph, 0), "instantiate graph");
      if (st) st = cudaOk(cudaGraphLaunch(exec, stream), "launch graph");
      if (exec) (void)cudaGraphExecDestroy(exec);
      (void)cudaGraphDestroy(graph);
      OPFORGE_RETURN_IF_ERROR(st);
    } else {
      run.status = p.instance->run(tactic, in_t, out_t, ws.data(), ws.size(), stream, record);
    }
    OPFORGE_RETURN_IF_ERROR(cudaOk(cudaStreamSynchronize(stream), "after the run"));
    OPFORGE_RETURN_IF_ERROR(cudaOk(cudaGetLastError(), "after the run"));
  }
  run.record = *record;
  if (run.status.isOk() && run.record.flag != 0) {
    std::vector<std::string> names;
    for (const auto& io : p.instance->op().schema().inputs) names.push_back(io.name);
    run.status = Status::outOfRange(key + " tactic " + std::to_string(tactic) + ": " +
                                    describeDeviceError(run.record, names));
  }
  // Bring the outputs back; data-dependent outputs get their real shapes.
  std::map<std::string, int64_t> b;
  for (size_t o = 0; o < p.out.size(); ++o) {
    TensorValue v;
    v.desc = p.out[o];
    v.data.resize(v.desc.bytes());
    if (!v.data.empty())
      OPFORGE_RETURN_IF_ERROR(
          cudaOk(cudaMemcpy(v.data.data(), out_t[o].data, v.data.size(), cudaMemcpyDeviceToHost),
                 "copy output"));
    if (v.desc.format == Format::kHWC) {
      v.data = test::channelsLastBytes(v, false);
      v.desc.format = Format::kLinear;
    }
    run.outputs.push_back(std::move(v));
  }
  for (const auto& s : p.sizes) {
    const TensorValue& st = run.outputs[s.output];
    int64_t value = st.desc.dtype == DataType::kInt64
                        ? *reinterpret_cast<const int64_t*>(st.data.data())
                        : *reinterpret_cast<const int32_t*>(st.data.data());
    if (value < 0)
      return Status::runtime("size tensor " + s.symbol + " came back negative (" +
                             std::to_string(value) + ")");
    b[s.symbol] = value;
  }
  if (!p.sizes.empty()) {
    auto look = [&](const std::string& s) -> std::optional<int64_t> {
      auto it = b.find(s);
      return it == b.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    for (size_t o = 0; o < p.out.size(); ++o) {
      OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(p.out_dims[o], look));
      TensorDesc d{p.out[o].dtype, dims};
      if (d.bytes() > run.outputs[o].data.size())
        return Status::runtime("a data-dependent size exceeds its upper bound");
      run.outputs[o].desc = d;
      run.outputs[o].data.resize(d.bytes());
    }
  }
  return run;
}

}  // namespace opforge::gpu
