#include "op_harness.h"
#include "value_inputs.h"

#include "opforge/device.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

namespace opforge::test {

Tolerance toleranceFor(DataType t) {
  switch (t) {
    case DataType::kFloat64:
      return {1e-12, 1e-12};
    case DataType::kFloat32:
      return {1e-5, 1e-5};
    case DataType::kFloat16:
      return {1e-3, 1e-3};
    case DataType::kBFloat16:
      return {1e-2, 1e-2};
    default:
      return {0, 0};
  }
}

TensorValue randomTensor(DataType t, const std::vector<int64_t>& dims, std::mt19937_64& rng,
                         double lo, double hi) {
  TensorValue v;
  v.desc = TensorDesc{t, dims};
  v.data.assign(v.desc.bytes(), 0);
  std::uniform_real_distribution<double> u(lo, hi);
  bool any = false;
  for (int64_t i = 0; i < v.desc.numel(); ++i) {
    double x = u(rng);
    if (!isFloatType(t)) x = t == DataType::kBool ? (x > (lo + hi) / 2) : std::round(x);
    any |= x != 0;
    storeFromDouble(v.data.data(), t, i, x);
  }
  if (!any && v.desc.numel() > 0) storeFromDouble(v.data.data(), t, 0, 1.0);
  return v;
}

TensorValue fromFloats(const std::vector<int64_t>& dims, const std::vector<float>& f) {
  TensorValue v;
  v.desc = TensorDesc{DataType::kFloat32, dims};
  v.data.resize(f.size() * 4);
  if (!f.empty()) std::memcpy(v.data.data(), f.data(), v.data.size());  // no null pointers
  return v;
}

TensorValue fromValues(DataType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  TensorValue x;
  x.desc = TensorDesc{t, std::move(dims)};
  x.data.assign(x.desc.bytes(), 0);
  for (size_t i = 0; i < v.size(); ++i)
    storeFromDouble(x.data.data(), t, static_cast<int64_t>(i), v[i]);
  return x;
}

TensorValue fromInt64s(const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kInt64, dims};
  t.data.resize(v.size() * sizeof(int64_t));
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

void expectError(const Status& st, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(st.isOk()) << "expected an error";
  for (const char* p : parts)
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "'" << p << "' missing in: " << st.message();
}

std::vector<double> toDoubles(const TensorValue& t) {
  std::vector<double> d(t.desc.numel());
  for (int64_t i = 0; i < t.desc.numel(); ++i) d[i] = loadAsDouble(t.data.data(), t.desc.dtype, i);
  return d;
}

namespace {
// The running test's directory; a listener removes it when the test ends.
struct TestDirs : ::testing::EmptyTestEventListener {
  std::mutex mu;
  std::string current;  // "" until the test asks for one
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!current.empty() && !std::getenv("OPFORGE_KEEP_TEST_DIRS")) {
      std::error_code ec;
      std::filesystem::remove_all(current, ec);
    }
    current.clear();
  }
};
TestDirs& testDirs() {
  static TestDirs* dirs = [] {
    auto* d = new TestDirs;  // owned by gtest's listener list
    ::testing::UnitTest::GetInstance()->listeners().Append(d);
    return d;
  }();
  return *dirs;
}
}  // namespace

std::string testDir() {
  TestDirs& dirs = testDirs();
  std::lock_guard<std::mutex> lock(dirs.mu);
  if (!dirs.current.empty()) return dirs.current;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  for (char& c : name)
    if (c == '/') c = '_';  // parameterized names
  std::string base = ::testing::TempDir();
  if (base.empty() || base.back() != '/') base += '/';
  std::error_code ec;
  std::filesystem::create_directories(base, ec);  // $TEST_TMPDIR may name a folder not made yet
  std::string templ = base + "opforge-" + name + "-" + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(templ.data())) {
    ADD_FAILURE() << "cannot create a test directory " << templ << ": " << std::strerror(errno);
    return base;
  }
  dirs.current = templ;
  return dirs.current;
}

std::string binaryDir() {
  // The build tree, or where its bin/ and lib/ were copied (the GPU machine): $OPFORGE_BINARY_DIR.
  const char* env = std::getenv("OPFORGE_BINARY_DIR");
  if (env && *env) return env;
#ifdef OPFORGE_BINARY_DIR
  return OPFORGE_BINARY_DIR;
#else
  // The installed harness (opforge::harness): the prefix above the libopforge.so it runs with.
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&Registry::create), &info) || !info.dli_fname) return ".";
  return std::filesystem::absolute(info.dli_fname).parent_path().parent_path().string();
#endif
}

std::shared_ptr<Registry> registryWith(const std::string& library) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<Registry>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto& r = loaded[library];
  if (!r) {
    r = Registry::create();
    Status st = r->loadLibrary(library);
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  return r;
}

std::string contribLibrary() {
  return binaryDir() + "/lib/libopforge_ops.so";
}

std::shared_ptr<Registry> contribRegistry() {
  static std::shared_ptr<Registry> r = [] {
    auto reg = Registry::create();
    Status st = reg->loadLibrary(contribLibrary());
    EXPECT_TRUE(st.isOk()) << st.message();
    return reg;
  }();
  return r;
}

Result<OpRun> runKernel(Registry& reg, const std::string& key, const Attrs& attrs,
                        const std::vector<TensorValue>& inputs, uint8_t poison, int32_t tactic,
                        const std::vector<Format>& out_formats) {
  const RegisteredOp* op = reg.find(key);
  if (!op) return Status::notFound("op " + key + " is not registered");
  AttrMap given;
  for (const auto& [k, v] : attrs) given.set(k, v);
  OPFORGE_ASSIGN_OR_RETURN(AttrMap checked, op->validateAttrs("harness", given));
  OPFORGE_ASSIGN_OR_RETURN(auto inst, op->instantiate("harness", checked));
  std::vector<InferInput> ins(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins[i].present = inputs[i].desc.dtype != DataType::kUndefined;
    std::vector<DimExpr> d(inputs[i].desc.dims.begin(), inputs[i].desc.dims.end());
    ins[i].desc = SymDesc::make(inputs[i].desc.dtype, d);
    ins[i].constant = &inputs[i];
    if (op->schema().inputs[std::min(i, op->schema().inputs.size() - 1)].value)
      ins[i].value = intValues(inputs[i]);
  }
  OPFORGE_ASSIGN_OR_RETURN(InferResult r, op->infer("harness", checked, ins, "harness#"));
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
  OpRun run;
  std::vector<Tensor> in_t, out_t;
  for (const auto& t : inputs)
    in_t.push_back(Tensor{t.desc, const_cast<uint8_t*>(t.data.data()), Device::kCpu});
  for (const auto& o : r.outputs) {
    OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(o.dims, look));
    TensorValue v;
    v.desc = TensorDesc{o.dtype, dims};
    if (run.outputs.size() < out_formats.size()) v.desc.format = out_formats[run.outputs.size()];
    v.data.assign(v.desc.bytes(), poison);
    if (o.alias >= 0) v.data = inputs[o.alias].data;  // in place: the output starts as the input
    run.outputs.push_back(std::move(v));
  }
  for (auto& v : run.outputs) out_t.push_back(Tensor{v.desc, v.data.data(), Device::kCpu});
  std::vector<TensorDesc> in_d, out_d;
  for (const auto& t : in_t) in_d.push_back(t.desc);
  for (const auto& t : out_t) out_d.push_back(t.desc);
  size_t ws = 0;
  if (!inst->tacticApplies(tactic, in_d, out_d, &ws))
    return Status::unsupported("tactic does not apply");
  std::vector<uint8_t> workspace(ws);
  OPFORGE_RETURN_IF_ERROR(inst->run(tactic, in_t, out_t, workspace.data(), ws, nullptr));
  // Data-dependent sizes: shrink outputs to their real shapes.
  for (const auto& s : r.size_tensors) {
    const TensorValue& st = run.outputs[s.output];
    b[s.symbol] = st.desc.dtype == DataType::kInt64
                      ? *reinterpret_cast<const int64_t*>(st.data.data())
                      : *reinterpret_cast<const int32_t*>(st.data.data());
  }
  if (!r.size_tensors.empty())
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(r.outputs[o].dims, look));
      run.outputs[o].desc.dims = dims;
      run.outputs[o].data.resize(run.outputs[o].desc.bytes());
    }
  return run;
}

Result<OpRun> runEngine(std::shared_ptr<Registry> reg, const std::string& key, const Attrs& attrs,
                        const std::vector<TensorValue>& inputs) {
  return runEngineWith(std::move(reg), key, attrs, inputs, BuilderConfig{});
}

Result<OpRun> runEngineWith(std::shared_ptr<Registry> reg, const std::string& key,
                            const Attrs& attrs, const std::vector<TensorValue>& inputs,
                            const BuilderConfig& cfg) {
  NetworkDefinition net(reg);
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    OPFORGE_ASSIGN_OR_RETURN(
        auto r, net.addInput("in" + std::to_string(i), inputs[i].desc.dtype, inputs[i].desc.dims));
    refs.push_back(r);
  }
  OPFORGE_ASSIGN_OR_RETURN(auto outs, net.addOp(key, refs, attrs, "node"));
  for (size_t o = 0; o < outs.size(); ++o)
    OPFORGE_RETURN_IF_ERROR(net.markOutput(outs[o], "out" + std::to_string(o)));
  Builder b(reg);
  OPFORGE_ASSIGN_OR_RETURN(auto plan, b.buildSerializedNetwork(net, cfg));
  OPFORGE_ASSIGN_OR_RETURN(auto engine, Engine::loadMemory(std::move(plan), "harness", reg));
  OPFORGE_ASSIGN_OR_RETURN(auto ctx, engine->createExecutionContext());
  ctx->setDebugPoison(true);
  for (size_t i = 0; i < inputs.size(); ++i)
    OPFORGE_RETURN_IF_ERROR(
        ctx->setInput("in" + std::to_string(i), inputs[i].data.data(), inputs[i].data.size()));
  OPFORGE_RETURN_IF_ERROR(ctx->execute());
  OpRun run;
  for (size_t o = 0; o < outs.size(); ++o) {
    OPFORGE_ASSIGN_OR_RETURN(Tensor t, ctx->output("out" + std::to_string(o)));
    TensorValue v;
    v.desc = t.desc;
    v.data.assign(static_cast<const uint8_t*>(t.data),
                  static_cast<const uint8_t*>(t.data) + t.bytes());
    run.outputs.push_back(std::move(v));
  }
  return run;
}

TacticReport checkOpTactics(std::shared_ptr<Registry> reg, const std::string& key,
                            const Attrs& attrs, const std::vector<TensorValue>& inputs,
                            std::optional<Tolerance> tol) {
  TacticReport report;
  const RegisteredOp* op = reg->find(key);
  if (!op) {
    ADD_FAILURE() << key << " is not registered";
    return report;
  }
  auto want = runKernel(*reg, key, attrs, inputs, 0xff);
  if (!want) {
    ADD_FAILURE() << key << ": the CPU reference failed: " << want.status().message();
    return report;
  }
  report.gpu = cudaDeviceInfo().isOk();
  std::vector<std::pair<Backend, std::pair<int32_t, std::string>>> tactics = {
      {Backend::kCpu, {0, "reference"}}};
  for (const auto& t : op->schema().tactics)
    if (t.id != 0 && (t.backend == Backend::kCpu || report.gpu))
      tactics.push_back({t.backend, {t.id, t.name}});
  for (const auto& [backend, tactic] : tactics) {
    const std::string label = std::string(backend == Backend::kCuda ? "cuda " : "cpu ") +
                              std::to_string(tactic.first) + " " + tactic.second;
    BuilderConfig cfg;
    cfg.backend = backend;
    cfg.tf32 = false;  // FP32 held to FP32's tolerance
    cfg.layer_tactics = {"node=" + std::to_string(tactic.first)};
    auto got = runEngineWith(reg, key, attrs, inputs, cfg);
    if (!got) {
      if (got.status().message().find("does not apply") != std::string::npos) {
        report.not_applicable.push_back(label);
      } else {
        ADD_FAILURE() << key << " " << label << ": " << got.status().message();
      }
      continue;
    }
    report.checked.push_back(label);
    if (got->outputs.size() != want->outputs.size()) {
      ADD_FAILURE() << key << " " << label << ": " << got->outputs.size() << " outputs, the "
                    << "reference " << want->outputs.size();
      continue;
    }
    for (size_t o = 0; o < got->outputs.size(); ++o)
      EXPECT_TRUE(allClose(got->outputs[o], want->outputs[o],
                           tol.value_or(toleranceFor(want->outputs[o].desc.dtype))))
          << key << " " << label << ", output " << o;
  }
  return report;
}

::testing::AssertionResult allClose(const TensorValue& got, const TensorValue& want,
                                    Tolerance tol) {
  if (got.desc.dtype != want.desc.dtype)
    return ::testing::AssertionFailure()
           << "dtype " << dtypeName(got.desc.dtype) << " vs " << dtypeName(want.desc.dtype);
  if (got.desc.dims != want.desc.dims)
    return ::testing::AssertionFailure()
           << "shape " << dimsToString(got.desc.dims) << " vs " << dimsToString(want.desc.dims);
  const bool half = got.desc.dtype == DataType::kFloat16;
  for (int64_t i = 0; i < got.desc.numel(); ++i) {
    double g = loadAsDouble(got.data.data(), got.desc.dtype, i);
    double w = loadAsDouble(want.data.data(), want.desc.dtype, i);
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) && std::isnan(g)) continue;
      return ::testing::AssertionFailure()
             << "element " << i << ": " << g << " vs " << w << " (NaN)";
    }
    if (std::isinf(w) || std::isinf(g)) {
      if (g == w) continue;
      return ::testing::AssertionFailure() << "element " << i << ": " << g << " vs " << w;
    }
    double bound = tol.atol + tol.rtol * std::fabs(w) + (half ? std::fabs(w) * 0x1p-10 : 0.0);
    if (std::fabs(g - w) > bound)
      return ::testing::AssertionFailure()
             << "element " << i << ": " << g << " vs " << w << " (|diff| " << std::fabs(g - w)
             << " > " << bound << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult allClose(const TensorValue& got, const TensorValue& want) {
  return allClose(got, want, toleranceFor(want.desc.dtype));
}

void checkOp(std::shared_ptr<Registry> reg, const std::string& key, const Attrs& attrs,
             const std::vector<TensorValue>& inputs) {
  auto a = runKernel(*reg, key, attrs, inputs, 0xff);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  auto b = runKernel(*reg, key, attrs, inputs, 0x00);
  ASSERT_TRUE(b.isOk()) << b.status().message();
  ASSERT_EQ(a->outputs.size(), b->outputs.size());
  for (size_t o = 0; o < a->outputs.size(); ++o)
    EXPECT_EQ(a->outputs[o].data, b->outputs[o].data)
        << key << " output " << o << " depends on the poison: some elements are never written";
  auto e = runEngine(reg, key, attrs, inputs);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  ASSERT_EQ(e->outputs.size(), a->outputs.size());
  for (size_t o = 0; o < a->outputs.size(); ++o)
    EXPECT_TRUE(allClose(e->outputs[o], a->outputs[o]))
        << key << " output " << o << " (engine vs reference)";
}

namespace {
std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}
std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : bytes) s += d[c >> 4], s += d[c & 15];
  return s;
}
template <class V, class F>
std::string list(const V& v, F one) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + one(v[i]);
  return s + "]";
}
}  // namespace

std::string describeAttrs(const Attrs& attrs) {
  std::string s = "{";
  for (const auto& kv : attrs) {
    const auto& k = kv.first;
    const auto& v = kv.second;  // a named reference: clang 14 cannot capture a structured binding
    s += (s.size() > 1 ? " " : "") + k + ":";
    s += std::visit(
        [&](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, double>) {
            return "double " + fmt("%.17g", x);
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            return "floats " + list(x, [](float f) { return fmt("%.9g", f); });
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            return "doubles " + list(x, [](double f) { return fmt("%.17g", f); });
          } else if constexpr (std::is_same_v<T, TensorValue>) {
            return "tensor " + dtypeName(x.desc.dtype) + " " + dimsToString(x.desc.dims) + " " +
                   hex(x.data);
          } else if constexpr (std::is_same_v<T, Bytes>) {
            return "bytes " + hex(x.data);
          } else {
            return "type" + std::to_string(v.index()) + " " +
                   attrToString(v, std::numeric_limits<size_t>::max());
          }
        },
        v);
  }
  return s + "}";
}

std::string describeTensor(const TensorValue& t) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (uint8_t c : t.data) h = (h ^ c) * 1099511628211ull;
  char b[32];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return dtypeName(t.desc.dtype) + " " + dimsToString(t.desc.dims) + " #" + b;
}

std::string describeTolerance(Tolerance tol) {
  return fmt("%.17g", tol.atol) + "/" + fmt("%.17g", tol.rtol);
}

}  // namespace opforge::test
