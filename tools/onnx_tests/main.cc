// opforge-onnx-tests — runs the ONNX backend node tests through opforge and reports per op.
//
//   opforge-onnx-tests DIR [--filter=TEXT] [--jobs=N] [--docs=FILE] [--min-passed=N] [--verbose]
//                      [--divergences=FILE] (cases whose test data are off; see divergences.txt)
//                      [--device=cpu|cuda]
//
// DIR holds one folder per case (test_<name>/model.onnx, test_data_set_<k>/input_<i>.pb and
// output_<i>.pb). Each case runs in a child process (a crash or a hang fails that case only):
//   1. Unsupported, with the reason, when the model uses an op opforge does not implement (or a
//      non-ONNX domain), a data type opforge does not have (STRING, float8, int4, ...), or a
//      sequence/optional/map value.
//   2. The graph inputs get the shapes of the data. The model is imported as it is; if that fails,
//      once more with the inputs that feed build-time value inputs (Reshape's shape, Slice's
//      starts, Resize's sizes, ...) turned into initializers holding the test data, since opforge
//      reads those values when it builds the plan; last, with every integer input whose values
//      reach such an input through other nodes (TensorRT's shape-tensor inputs).
//   3. Build, run, compare with the ONNX runner's rule: same dtype and shape, |got - want| <=
//      1e-7 + 1e-3 |want|, NaN matches NaN, infinities match exactly. CUDA plans may also miss by
//      1e-6 max|want| on floating outputs (a tactic's summation order; see compare()).
//   4. Again with constant folding off and the naive CPU kernels (no OpenBLAS), so that every
//      kernel runs and both CPU paths are checked.
// An import/build error with status Unsupported (a variant opforge does not claim, e.g. Resize
// antialias) counts as unsupported; every other error or mismatch is a failure.
//
// --device=cuda builds CUDA plans (the autotuner picks each layer's tactic; layers without a CUDA
// tactic run on the CPU with copies) with the same pass criterion. A case counts as passed whether
// or not its layers ran CUDA tactics; the summary says how many passing cases ran at least one
// CUDA tactic (reformats not counted) and how many ran every layer on the GPU.
//
// Prints a table per op, the failures, and one last line
//   node tests: N passed, M failed, K unsupported
// Exit status: 0 when nothing failed (and at least --min-passed passed), 1 otherwise, 77 when DIR
// does not exist (CTest's skip code).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "onnx/onnx_pb.h"
#include "onnx/onnx_tensor.h"
#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/runtime.h"
#include "ops/onnx/common/gemm.h"

namespace {

using namespace opforge;

constexpr double kRtol = 1e-3, kAtol = 1e-7;
// CUDA plans only: an absolute error allowed per unit of the output's largest magnitude (see
// compare()); 1e-6 is about 8 FP32 ulps of that magnitude.
constexpr double kCudaScaledAtol = 1e-6;

// --divergences=FILE: cases whose expected data are known to be off, each with a wider tolerance
// and the reason, one per line: "test_name[@cpu|@cuda] rtol atol reason..." ('#' starts a
// comment). Like ONNX Runtime's list of broken backend tests, but strict both ways: a listed case
// must still match within its own tolerance, and one that meets the runner's tolerance again is a
// failure (the entry is stale and must go). "@cpu" / "@cuda" limits an entry to that backend:
// data off by about one ulp may be missed by one backend's rounding and met by the other's.
struct Divergence {
  double rtol = 0, atol = 0;
  std::string reason;
};
std::map<std::string, Divergence> g_divergences;
std::string g_divergence_file;
// For the case this process runs: the tolerance compare() uses, and whether any element missed
// the runner's own tolerance.
double g_rtol = kRtol, g_atol = kAtol;
bool g_missed_strict = false;

struct Outcome {
  // kDivergent: a case of the --divergences list that misses its test data by more than the
  // runner's tolerance but stays within the entry's own (the reason says why the data are off).
  enum Kind { kPassed, kFailed, kUnsupported, kDivergent } kind = kFailed;
  std::string reason;
  std::string dtypes;                  // "FP32,INT64"
  int gpu_layers = 0, cpu_layers = 0;  // CUDA plans: layers on CUDA tactics / on the CPU reference
};

Backend g_backend = Backend::kCpu;

struct Case {
  std::string name, dir, op;
  int opset = 0;
  Outcome out;
};

// --not-implemented=FILE: why each op of the test data that opforge does not implement is left
// out, one per line: "Op reason..." ('#' starts a comment). The docs list the reasons; an op left
// out without a line, or a line for an op that is implemented now, fails the run.
std::map<std::string, std::string> g_not_implemented;
std::string g_not_implemented_file;

// The ops of the test data opforge does not implement: single-op case groups none of whose cases
// passed or failed, and whose op the registry does not know.
std::set<std::string> missingOps(const std::vector<Case>& cases,
                                 const std::set<std::string>& implemented) {
  std::map<std::string, bool> ran;
  for (const auto& c : cases)
    ran[c.op] = ran[c.op] || c.out.kind == Outcome::kPassed || c.out.kind == Outcome::kFailed ||
                c.out.kind == Outcome::kDivergent;
  std::set<std::string> out;
  for (const auto& [name, any] : ran)
    if (!implemented.count(name) && !any && name.find(' ') == std::string::npos &&
        name.find('+') == std::string::npos)
      out.insert(name);
  return out;
}

std::set<std::string> implementedOps(const Registry& reg) {
  std::set<std::string> implemented;
  for (const RegisteredOp* op : reg.ops())
    if (op->schema().ns == "ai.onnx") {
      implemented.insert(op->schema().name);
      for (const auto& alias : op->schema().aliases)
        if (alias.rfind("ai.onnx::", 0) == 0) implemented.insert(alias.substr(9));
    }
  // The importer's own: If (opforge::IfSelect and guarded layers), Loop and Scan (unrolled).
  for (const char* op : {"If", "Loop", "Scan"}) implemented.insert(op);
  return implemented;
}

// Which onnx release the cases come from: DIR/ONNX_VERSION, written by node_tests.py when it
// generates the cases from the installed package ("onnx 1.23.2, 1884 cases"); for a folder
// without it (an older copy of the onnx repository's data), "test data in DIR".
std::string dataLabel(const std::string& dir) {
  std::ifstream f(dir + "/ONNX_VERSION");
  std::string line;
  if (f && std::getline(f, line) && !line.empty()) return line;
  return "test data in " + dir;
}

bool isDir(const std::string& p) {
  struct stat sb;
  return ::stat(p.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode);
}
bool isFile(const std::string& p) {
  struct stat sb;
  return ::stat(p.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
}
std::vector<std::string> listDir(const std::string& d) {
  std::vector<std::string> out;
  if (DIR* dp = ::opendir(d.c_str())) {
    while (dirent* e = ::readdir(dp))
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    ::closedir(dp);
  }
  std::sort(out.begin(), out.end());
  return out;
}
Result<std::string> readFile(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return Status::io("cannot read " + p);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
std::string oneLine(std::string s, size_t max = 400) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

std::string onnxTypeName(int32_t t) {
  static const char* kNames[] = {
      "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
      "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
      "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
      "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0",
      "UINT2",          "INT2"};
  return t >= 0 && t < static_cast<int32_t>(std::size(kNames)) ? kNames[t]
                                                               : "type " + std::to_string(t);
}

// The op a case is filed under: the node's op for one-node models, "<Op> (expanded)" for the
// function-expanded variants (their tensors are named "<Op>_test_..."), else the op types.
std::string opLabel(const onnx::ModelProto& m, const std::string& name) {
  const auto& g = m.graph();
  if (g.node_size() == 1) return g.node(0).op_type();
  if (name.find("_expanded") != std::string::npos) {
    for (const auto& n : g.node())
      for (const auto& o : n.output()) {
        const size_t p = o.find("_test_");
        if (p != std::string::npos && p > 0) return o.substr(0, p) + " (expanded)";
      }
  }
  std::set<std::string> ops;
  for (const auto& n : g.node())
    if (n.op_type() != "Constant") ops.insert(n.op_type());
  std::string s;
  for (const auto& o : ops) s += (s.empty() ? "" : "+") + o;
  return s.empty() ? "Constant" : s;
}

Outcome unsupported(std::string why) {
  return {Outcome::kUnsupported, oneLine(std::move(why)), ""};
}
Outcome failed(std::string why) {
  return {Outcome::kFailed, oneLine(std::move(why)), ""};
}

// Control flow the importer implements itself (no op of the registry): If, Loop and Scan.
bool importerOp(const onnx::NodeProto& n) {
  return (n.domain().empty() || n.domain() == "ai.onnx") &&
         (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan");
}
// A Loop's trip count and condition are read when the plan is built (it is unrolled).
bool loopValueInput(const onnx::NodeProto& n, int i) {
  return n.op_type() == "Loop" && i < 2;
}

// The first op of `g` (or of the subgraphs of its If nodes) opforge does not implement ("").
std::string unknownOp(const onnx::GraphProto& g, const Registry& reg) {
  for (const auto& n : g.node()) {
    if (importerOp(n)) {
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH)
          if (auto r = unknownOp(a.g(), reg); !r.empty()) return r;
      continue;
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      return "op domain '" + n.domain() + "' (" + n.op_type() + ") not implemented";
    if (!reg.find("ai.onnx", n.op_type(), "1")) return "op " + n.op_type() + " not implemented";
  }
  return "";
}

// Why a model is outside what opforge claims ("" when it is not).
std::string unsupportedReason(const onnx::ModelProto& m, const Registry& reg) {
  const auto& g = m.graph();
  if (auto r = unknownOp(g, reg); !r.empty()) return r;
  auto checkValue = [](const onnx::ValueInfoProto& v) -> std::string {
    if (!v.type().has_tensor_type())
      return "value '" + v.name() + "' is a sequence/optional/map, not a tensor";
    const int32_t t = v.type().tensor_type().elem_type();
    if (!isKnownDataType(t))
      return "dtype " + onnxTypeName(t) + " not supported (value '" + v.name() + "')";
    return "";
  };
  for (const auto& v : g.input())
    if (auto r = checkValue(v); !r.empty()) return r;
  for (const auto& v : g.output())
    if (auto r = checkValue(v); !r.empty()) return r;
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      if (a.type() == onnx::AttributeProto::TENSOR && !isKnownDataType(a.t().data_type()))
        return "dtype " + onnxTypeName(a.t().data_type()) + " not supported (attribute '" +
               a.name() + "' of " + n.op_type() + ")";
  return "";
}

// Names of graph inputs that some node reads at a build-time value position (from input
// `first` on: position 0 is mostly the data that shape values merely pass through).
// The nodes of If branches count too (they read the graph's inputs by name).
void valueFedIn(const onnx::GraphProto& g, const std::set<std::string>& graph_inputs,
                const Registry& reg, int first, std::set<std::string>& out) {
  for (const auto& n : g.node()) {
    if (importerOp(n)) {
      for (int i = 0; i < n.input_size(); ++i)
        if (loopValueInput(n, i) && graph_inputs.count(n.input(i))) out.insert(n.input(i));
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH)
          valueFedIn(a.g(), graph_inputs, reg, first, out);
      continue;
    }
    const RegisteredOp* op = reg.find("ai.onnx", n.op_type(), "1");
    if (!op) continue;
    const auto& ins = op->schema().inputs;
    for (int i = first; i < n.input_size(); ++i) {
      if (ins.empty()) break;
      const size_t d = std::min(static_cast<size_t>(i), ins.size() - 1);
      if (ins[d].value && graph_inputs.count(n.input(i))) out.insert(n.input(i));
    }
  }
}
// Graph inputs whose values reach a build-time value position through any chain of nodes (the
// AffineGrid expansion splits its `size` input into N, C, H, W and builds shapes of them): the
// shape-tensor inputs of TensorRT, whose values a profile gives at build time.
void valueFlow(const onnx::GraphProto& g, std::map<std::string, std::set<std::string>>& from,
               const Registry& reg, std::set<std::string>& out) {
  auto of = [&](const std::string& v) {
    auto it = from.find(v);
    return it == from.end() ? std::set<std::string>{} : it->second;
  };
  for (const auto& n : g.node()) {
    std::set<std::string> u;
    if (importerOp(n)) {
      for (int i = 0; i < n.input_size(); ++i)
        if (loopValueInput(n, i)) {
          const auto f = of(n.input(i));
          out.insert(f.begin(), f.end());
        }
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH) {
          valueFlow(a.g(), from, reg, out);
          for (const auto& o : a.g().output())
            for (const auto& x : of(o.name())) u.insert(x);
        }
    } else {
      const RegisteredOp* op = reg.find("ai.onnx", n.op_type(), "1");
      for (int i = 0; i < n.input_size(); ++i) {
        const auto f = of(n.input(i));
        u.insert(f.begin(), f.end());
        if (!op || op->schema().inputs.empty()) continue;
        const auto& ins = op->schema().inputs;
        if (ins[std::min(static_cast<size_t>(i), ins.size() - 1)].value)
          out.insert(f.begin(), f.end());
      }
    }
    for (const auto& o : n.output()) from[o] = u;
  }
}
std::set<std::string> valueFlowInputs(const onnx::ModelProto& m, const Registry& reg) {
  std::map<std::string, std::set<std::string>> from;
  for (const auto& v : m.graph().input()) {
    const int32_t t = v.type().tensor_type().elem_type();
    if (t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32) from[v.name()] = {v.name()};
  }
  std::set<std::string> out;
  valueFlow(m.graph(), from, reg, out);
  return out;
}

std::set<std::string> valueFedInputs(const onnx::ModelProto& m, const Registry& reg, int first) {
  std::set<std::string> graph_inputs;
  for (const auto& v : m.graph().input()) graph_inputs.insert(v.name());
  std::set<std::string> out;
  valueFedIn(m.graph(), graph_inputs, reg, first, out);
  return out;
}

Status compare(const std::string& what, const Tensor& got, const TensorValue& want) {
  if (got.desc.dtype != want.desc.dtype)
    return Status::invalid(what + ": dtype " + dtypeName(got.desc.dtype) + ", expected " +
                           dtypeName(want.desc.dtype));
  if (got.desc.dims != want.desc.dims)
    return Status::invalid(what + ": shape " + dimsToString(got.desc.dims) + ", expected " +
                           dimsToString(want.desc.dims));
  // On CUDA plans a floating output may also miss by kCudaScaledAtol x its largest expected
  // magnitude: the autotuner picks by speed, and a Winograd convolution or a split reduction
  // rounds its sum differently from the reference's order (test_convtranspose: 8.6e-6 where 0 is
  // expected, of outputs up to 36; FP32 rounding of that sum). Integer outputs stay exact.
  double scaled_atol = 0;
  if (g_backend == Backend::kCuda && isFloatType(want.desc.dtype)) {
    double scale = 0;
    for (int64_t i = 0; i < want.desc.numel(); ++i) {
      const double w = loadAsDouble(want.data.data(), want.desc.dtype, i);
      if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
    }
    scaled_atol = kCudaScaledAtol * scale;
  }
  for (int64_t i = 0; i < want.desc.numel(); ++i) {
    const double g = loadAsDouble(got.data, got.desc.dtype, i),
                 w = loadAsDouble(want.data.data(), want.desc.dtype, i);
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) && std::isnan(g)) continue;
    } else if (std::isinf(w) || std::isinf(g)) {
      if (g == w) continue;
    } else if (std::fabs(g - w) <= kAtol + scaled_atol + kRtol * std::fabs(w)) {
      continue;
    } else if (std::fabs(g - w) <= g_atol + g_rtol * std::fabs(w)) {
      g_missed_strict = true;
      continue;
    }
    std::ostringstream os;
    os.precision(9);
    os << what << ": element " << i << " is " << g << ", expected " << w;
    return Status::invalid(os.str());
  }
  return Status::ok();
}

struct DataSet {
  std::vector<std::pair<std::string, std::string>>
      inputs;  // graph input name -> serialized TensorProto
  std::vector<TensorValue> input_values;
  std::vector<TensorValue> outputs;
};

// One build and run; returns a status whose code tells unsupported from failed. *built tells
// whether the plan was built (a later error is a wrong result or a run-time failure).
Status runOnce(const onnx::ModelProto& base, const DataSet& ds,
               const std::set<std::string>& as_constants, const std::string& name, bool fold,
               bool* built, Outcome* layers = nullptr) {
  *built = false;
  onnx::ModelProto m = base;
  auto* g = m.mutable_graph();
  // Inputs: concrete shapes from the data; value-fed ones become initializers.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& in : g->input()) {
    auto it = std::find_if(ds.inputs.begin(), ds.inputs.end(),
                           [&](const auto& p) { return p.first == in.name(); });
    if (it == ds.inputs.end()) {
      *kept.Add() = in;
      continue;
    }
    const size_t idx = static_cast<size_t>(it - ds.inputs.begin());
    if (as_constants.count(in.name())) {
      onnx::TensorProto t;
      t.ParseFromString(it->second);
      t.set_name(in.name());
      *g->add_initializer() = t;
      continue;
    }
    onnx::ValueInfoProto v = in;
    auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : ds.input_values[idx].desc.dims) shape->add_dim()->set_dim_value(d);
    *kept.Add() = v;
  }
  *g->mutable_input() = kept;
  std::string bytes;
  m.SerializeToString(&bytes);
  OPFORGE_ASSIGN_OR_RETURN(NetworkDefinition net, importOnnxBytes(bytes, name, ""));
  BuilderConfig cfg;
  cfg.tf32 = false;  // the node tests check ONNX's FP32 arithmetic: no TF32 tactics
  cfg.constant_folding = fold;
  cfg.backend = g_backend;
  Builder builder;
  OPFORGE_ASSIGN_OR_RETURN(auto plan, builder.buildSerializedNetwork(net, cfg));
  *built = true;
  OPFORGE_ASSIGN_OR_RETURN(auto engine, Engine::loadMemory(std::move(plan), name));
  if (layers && g_backend == Backend::kCuda) {
    layers->gpu_layers = layers->cpu_layers = 0;
    for (const auto& l : engine->layers()) {
      if (l.op.rfind("opforge::Reformat", 0) == 0) continue;
      (std::atoi(l.tactic.c_str()) > 0 ? layers->gpu_layers : layers->cpu_layers)++;
    }
  }
  OPFORGE_ASSIGN_OR_RETURN(auto ctx, engine->createExecutionContext());
  for (size_t i = 0; i < ds.inputs.size(); ++i) {
    if (as_constants.count(ds.inputs[i].first)) continue;
    const TensorValue& v = ds.input_values[i];
    OPFORGE_RETURN_IF_ERROR(ctx->setInputShape(ds.inputs[i].first, v.desc.dims));
    OPFORGE_RETURN_IF_ERROR(ctx->setInput(ds.inputs[i].first, v.data.data(), v.data.size()));
  }
  OPFORGE_RETURN_IF_ERROR(ctx->execute());
  for (int o = 0; o < base.graph().output_size(); ++o) {
    const std::string& oname = base.graph().output(o).name();
    OPFORGE_ASSIGN_OR_RETURN(Tensor t, ctx->output(oname));
    OPFORGE_RETURN_IF_ERROR(compare("output '" + oname + "'", t, ds.outputs[o]));
  }
  return Status::ok();
}

Outcome runCaseWith(Case& c, const Registry& reg);

Outcome runCase(Case& c, const Registry& reg) {
  auto it = g_divergences.find(c.name);
  if (it == g_divergences.end()) {
    g_rtol = kRtol, g_atol = kAtol;
    return runCaseWith(c, reg);
  }
  g_rtol = it->second.rtol, g_atol = it->second.atol, g_missed_strict = false;
  Outcome o = runCaseWith(c, reg);
  if (o.kind != Outcome::kPassed) return o;
  if (!g_missed_strict)
    return failed("listed in " + g_divergence_file +
                  " as diverging from its test data, but it matches them: remove the entry");
  o.kind = Outcome::kDivergent;
  o.reason = it->second.reason;
  return o;
}

Outcome runCaseWith(Case& c, const Registry& reg) {
  auto bytes = readFile(c.dir + "/model.onnx");
  if (!bytes) return failed(bytes.status().message());
  onnx::ModelProto m;
  if (!m.ParseFromString(*bytes)) return failed("model.onnx does not parse");
  if (auto why = unsupportedReason(m, reg); !why.empty()) return unsupported(why);
  std::string dtypes;
  {
    std::set<std::string> names;
    for (const auto& v : m.graph().input())
      names.insert(dtypeName(static_cast<DataType>(v.type().tensor_type().elem_type())));
    for (const auto& v : m.graph().output())
      names.insert(dtypeName(static_cast<DataType>(v.type().tensor_type().elem_type())));
    for (const auto& n : names) dtypes += (dtypes.empty() ? "" : ",") + n;
  }
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  std::vector<DataSet> sets;
  for (const auto& d : listDir(c.dir)) {
    if (d.rfind("test_data_set_", 0) != 0) continue;
    DataSet ds;
    int k = 0;
    for (const auto& in : m.graph().input()) {
      if (initializers.count(in.name())) continue;
      const std::string p = c.dir + "/" + d + "/input_" + std::to_string(k++) + ".pb";
      if (!isFile(p)) return failed("missing " + p);
      auto raw = readFile(p);
      if (!raw) return failed(raw.status().message());
      auto v = onnx_io::readTensorFile(p);
      if (!v)
        return v.status().code() == StatusCode::kUnsupported ? unsupported(v.status().message())
                                                             : failed(v.status().message());
      ds.inputs.emplace_back(in.name(), *raw);
      ds.input_values.push_back(std::move(*v));
    }
    for (int o = 0; o < m.graph().output_size(); ++o) {
      auto v = onnx_io::readTensorFile(c.dir + "/" + d + "/output_" + std::to_string(o) + ".pb");
      if (!v)
        return v.status().code() == StatusCode::kUnsupported ? unsupported(v.status().message())
                                                             : failed(v.status().message());
      ds.outputs.push_back(std::move(*v));
    }
    sets.push_back(std::move(ds));
  }
  if (sets.empty()) return failed("no test_data_set_* folder");
  // Build-time values: first every input as a real input; if that fails, the inputs read as
  // values from position 1 on as constants (Reshape's shape, not its data); then all of them.
  const std::vector<std::set<std::string>> attempts = {
      {}, valueFedInputs(m, reg, 1), valueFedInputs(m, reg, 0), valueFlowInputs(m, reg)};
  Outcome layers;
  for (const auto& ds : sets) {
    std::set<std::string> consts;
    bool built = false;
    Status st = runOnce(m, ds, consts, c.name, true, &built, &layers);
    // Only a plan that could not be built is retried (also one refused as unsupported: a Loop's
    // trip count given as an input is read when the plan is built); a wrong result is a failure.
    for (size_t a = 1; a < attempts.size() && !st && !built; ++a) {
      if (attempts[a].empty() || attempts[a] == attempts[a - 1]) continue;
      Status again = runOnce(m, ds, attempts[a], c.name, true, &built, &layers);
      if (again || built || again.code() == StatusCode::kUnsupported) {
        st = again;
        consts = attempts[a];
      }
    }
    if (!st)
      return st.code() == StatusCode::kUnsupported ? unsupported(st.message())
                                                   : failed(st.message());
    ops::setNaiveKernels(true);
    st = runOnce(m, ds, consts, c.name, false, &built);
    ops::setNaiveKernels(false);
    if (!st) return failed("with constant folding off and naive kernels: " + st.message());
  }
  Outcome ok{Outcome::kPassed, "", dtypes};
  ok.gpu_layers = layers.gpu_layers;
  ok.cpu_layers = layers.cpu_layers;
  return ok;
}

// Runs a case in a child process; returns its outcome (a crash or timeout is a failure).
struct Running {
  pid_t pid;
  int fd;
  size_t index;
  std::chrono::steady_clock::time_point start;
};

Running launch(std::vector<Case>& cases, size_t i, const Registry& reg) {
  int p[2];
  if (::pipe(p) != 0) {
    cases[i].out = failed("pipe() failed");
    return {-1, -1, i, {}};
  }
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    Outcome o = runCase(cases[i], reg);
    const std::string msg = std::to_string(static_cast<int>(o.kind)) + "\t" +
                            std::to_string(o.gpu_layers) + "\t" + std::to_string(o.cpu_layers) +
                            "\t" + o.dtypes + "\t" + o.reason;
    size_t done = 0;
    while (done < msg.size()) {
      const ssize_t w = ::write(p[1], msg.data() + done, msg.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    ::close(p[1]);
    ::_exit(0);
  }
  ::close(p[1]);
  if (pid < 0) {
    ::close(p[0]);
    cases[i].out = failed("fork() failed");
    return {-1, -1, i, {}};
  }
  return {pid, p[0], i, std::chrono::steady_clock::now()};
}

void collect(std::vector<Case>& cases, const Running& r, int status, bool timed_out) {
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(r.fd, buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  ::close(r.fd);
  Outcome& o = cases[r.index].out;
  if (timed_out) {
    o = failed("timed out");
  } else if (WIFSIGNALED(status)) {
    o = failed(std::string("crashed: ") + strsignal(WTERMSIG(status)));
  } else if (msg.empty()) {
    o = failed("the case process exited without a result (status " +
               std::to_string(WEXITSTATUS(status)) + ")");
  } else {
    const size_t t1 = msg.find('\t'), t2 = msg.find('\t', t1 + 1), t3 = msg.find('\t', t2 + 1),
                 t4 = msg.find('\t', t3 + 1);
    o.kind = static_cast<Outcome::Kind>(std::stoi(msg.substr(0, t1)));
    o.gpu_layers = std::stoi(msg.substr(t1 + 1, t2 - t1 - 1));
    o.cpu_layers = std::stoi(msg.substr(t2 + 1, t3 - t2 - 1));
    o.dtypes = msg.substr(t3 + 1, t4 - t3 - 1);
    o.reason = msg.substr(t4 + 1);
  }
}

std::string opsetRange(const std::set<int>& s) {
  if (s.empty()) return "";
  std::string out;
  for (int v : s) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

void writeDocs(const std::string& path, const std::vector<Case>& cases, const Registry& reg,
               const std::string& dir, int passed, int failed_n, int unsup) {
  struct Row {
    int pass = 0, fail = 0, unsup = 0;
    std::set<int> opsets;
    std::set<std::string> dtypes;
    std::set<std::string> reasons;
  };
  std::map<std::string, Row> rows;
  for (const auto& c : cases) {
    Row& r = rows[c.op];
    if (c.out.kind == Outcome::kPassed) {
      ++r.pass;
      r.opsets.insert(c.opset);
      std::stringstream ss(c.out.dtypes);
      std::string t;
      while (std::getline(ss, t, ',')) r.dtypes.insert(t);
    } else if (c.out.kind == Outcome::kFailed) {
      ++r.fail;
    } else if (c.out.kind == Outcome::kDivergent) {
      // listed in their own section
    } else {
      ++r.unsup;
      std::string why = c.out.reason;
      if (why.rfind(c.name + ": ", 0) == 0) why = why.substr(c.name.size() + 2);
      if (why.rfind("node '", 0) == 0 && why.find("): ") != std::string::npos)
        why = why.substr(why.find("): ") + 3);
      if (why.rfind("dtype ", 0) == 0) why = why.substr(0, why.find(" (value"));
      if (why.size() > 90) why = why.substr(0, 90) + "...";
      r.reasons.insert(why);
    }
  }
  int off_count = 0;
  for (const auto& c : cases) off_count += c.out.kind == Outcome::kDivergent;
  std::ostringstream md;
  md << "# ONNX operator support (" << (g_backend == Backend::kCuda ? "CUDA" : "CPU") << ")\n\n"
     << "Generated by `build/bin/opforge-onnx-tests " << dir
     << (g_divergence_file.empty() ? "" : " --divergences=" + g_divergence_file)
     << (g_not_implemented_file.empty() ? "" : " --not-implemented=" + g_not_implemented_file)
     << " --docs=docs/onnx-support.md` from the ONNX backend node\n"
     << "tests (" << dataLabel(dir)
     << "). A case passes when the plan built from its model, run on "
        "the CPU, matches the\n"
     << "expected outputs (rtol 1e-3, atol 1e-7, exact shape and dtype, NaN equals NaN) both with "
        "the default build\n"
     << "(constant folding, OpenBLAS paths) and with constant folding off and the naive reference "
        "kernels.\n\n"
     << "**Summary: " << passed << " passed, " << failed_n << " failed, " << unsup << " unsupported"
     << (off_count ? ", " + std::to_string(off_count) + " with off test data" : "") << ".**\n\n"
     << "## Implemented ONNX ops\n\n"
     << "One definition per op serves opset 11 to 27: attributes that became inputs (Reshape, "
        "Slice, Pad, Squeeze/Unsqueeze,\n"
     << "Reduce* axes, Split, Resize, Clip, TopK) are read from either, renamed modes (GridSample "
        "bilinear/linear) both\n"
     << "accepted, and Softmax/LogSoftmax/Hardmax follow the model's opset. Columns: the opsets "
        "and data types of the passing\n"
     << "cases; cases passed / failed / unsupported (an input or variant opforge does not claim, "
        "with the reason).\n"
     << "Inputs that an op reads when the plan is built (Reshape's shape, Slice's starts, ...) are "
        "given to it as constants\n"
     << "when the test feeds them as graph inputs.\n\n"
     << "| op | opsets (passing cases) | dtypes (passing cases) | passed | failed | unsupported "
        "|\n|---|---|---|---|---|---|\n";
  const std::set<std::string> implemented = implementedOps(reg);
  for (const auto& name : implemented) {
    const Row r = rows.count(name) ? rows[name] : Row{};
    std::string dt;
    for (const auto& t : r.dtypes) dt += (dt.empty() ? "" : ", ") + t;
    std::string why;
    for (const auto& w : r.reasons) why += (why.empty() ? "" : "; ") + w;
    md << "| " << name << " | " << opsetRange(r.opsets) << " | " << dt << " | " << r.pass << " | "
       << r.fail << " | " << r.unsup << (why.empty() ? "" : " (" + why + ")") << " |\n";
  }
  md << "\n## Multi-node cases (function expansions and others)\n\n"
     << "| case group | passed | failed | unsupported |\n|---|---|---|---|\n";
  for (const auto& [name, r] : rows)
    if (!implemented.count(name) && (r.pass || r.fail) && name.find(' ') != std::string::npos)
      md << "| " << name << " | " << r.pass << " | " << r.fail << " | " << r.unsup << " |\n";
  md << "\n## Not implemented\n\nOps of the test data that opforge does not implement (their cases "
        "count as unsupported), each with the reason"
     << (g_not_implemented_file.empty() ? "" : " (`" + g_not_implemented_file + "`)") << ":\n\n"
     << "| op | cases | why |\n|---|---|---|\n";
  for (const auto& name : missingOps(cases, implemented)) {
    const auto why = g_not_implemented.find(name);
    md << "| " << name << " | " << rows[name].unsup << " | "
       << (why == g_not_implemented.end() ? "(no reason recorded)" : why->second) << " |\n";
  }
  std::string off;
  for (const auto& c : cases)
    if (c.out.kind == Outcome::kDivergent)
      off += "| " + c.name + " | " + c.op + " | " + c.out.reason + " |\n";
  if (!off.empty())
    md << "\n## Cases whose test data are off\n\nListed in `" << g_divergence_file
       << "` with a tolerance of their own; each still matches within it,\nand the runner "
          "fails an entry that meets the normal tolerance again.\n\n"
       << "| case | op | why |\n|---|---|---|\n"
       << off;
  std::ofstream f(path + ".tmp");
  f << md.str();
  f.close();
  if (!f || ::rename((path + ".tmp").c_str(), path.c_str()) != 0)
    std::cerr << "cannot write " << path << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, filter, docs;
  int jobs = 1, min_passed = 0;
  bool verbose = false, no_fork = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* p) { return a.substr(std::strlen(p)); };
    if (a.rfind("--filter=", 0) == 0)
      filter = val("--filter=");
    else if (a.rfind("--jobs=", 0) == 0)
      jobs = std::max(1, std::atoi(val("--jobs=").c_str()));
    else if (a.rfind("--docs=", 0) == 0)
      docs = val("--docs=");
    else if (a.rfind("--divergences=", 0) == 0)
      g_divergence_file = val("--divergences=");
    else if (a.rfind("--not-implemented=", 0) == 0)
      g_not_implemented_file = val("--not-implemented=");
    else if (a.rfind("--min-passed=", 0) == 0)
      min_passed = std::atoi(val("--min-passed=").c_str());
    else if (a == "--verbose" || a == "-v")
      verbose = true;
    else if (a == "--no-fork")
      no_fork = true;
    else if (a == "--device=cuda")
      g_backend = Backend::kCuda;
    else if (a == "--device=cpu")
      g_backend = Backend::kCpu;
    else if (a == "--help" || a == "-h") {
      std::cout << "usage: opforge-onnx-tests DIR [--filter=TEXT] [--jobs=N] [--docs=FILE] "
                   "[--divergences=FILE] [--not-implemented=FILE] [--min-passed=N] [--verbose] "
                   "[--no-fork] [--device=cpu|cuda]\n";
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "opforge-onnx-tests: unknown option " << a << "\n";
      return 2;
    } else {
      dir = a;
    }
  }
  if (dir.empty()) {
    std::cerr << "usage: opforge-onnx-tests DIR [--filter=TEXT] [--jobs=N] [--docs=FILE] "
                 "[--min-passed=N]\n";
    return 2;
  }
  if (!isDir(dir)) {
    std::cout << "opforge-onnx-tests: skipped: " << dir << " does not exist\n";
    return 77;
  }
  if (!g_divergence_file.empty()) {
    std::ifstream f(g_divergence_file);
    if (!f) {
      std::cerr << "opforge-onnx-tests: cannot read --divergences=" << g_divergence_file << "\n";
      return 2;
    }
    std::string line;
    for (int no = 1; std::getline(f, line); ++no) {
      if (line.find('#') != std::string::npos) line.erase(line.find('#'));
      std::istringstream is(line);
      std::string name;
      Divergence d;
      if (!(is >> name)) continue;
      if (!(is >> d.rtol >> d.atol) || d.rtol < 0 || d.atol < 0) {
        std::cerr << g_divergence_file << ":" << no
                  << ": want 'test_name[@cpu|@cuda] rtol atol reason'\n";
        return 2;
      }
      std::getline(is >> std::ws, d.reason);
      if (const auto at = name.find('@'); at != std::string::npos) {
        const std::string only = name.substr(at + 1);
        if (only != "cpu" && only != "cuda") {
          std::cerr << g_divergence_file << ":" << no << ": backend '" << only
                    << "' after '@' (want cpu or cuda)\n";
          return 2;
        }
        name.resize(at);
        if (only != (g_backend == Backend::kCuda ? "cuda" : "cpu")) continue;
      }
      if (!g_divergences.emplace(name, d).second) {
        std::cerr << g_divergence_file << ":" << no << ": " << name << " is listed twice\n";
        return 2;
      }
    }
  }
  if (!g_not_implemented_file.empty()) {
    std::ifstream f(g_not_implemented_file);
    if (!f) {
      std::cerr << "opforge-onnx-tests: cannot read --not-implemented=" << g_not_implemented_file
                << "\n";
      return 2;
    }
    std::string line;
    for (int no = 1; std::getline(f, line); ++no) {
      if (line.find('#') != std::string::npos) line.erase(line.find('#'));
      std::istringstream is(line);
      std::string name, why;
      if (!(is >> name)) continue;
      std::getline(is >> std::ws, why);
      if (why.empty()) {
        std::cerr << g_not_implemented_file << ":" << no << ": want 'Op reason'\n";
        return 2;
      }
      g_not_implemented[name] = why;
    }
  }
  auto reg = Registry::global();
  std::vector<Case> cases;
  for (const auto& d : listDir(dir)) {
    const std::string p = dir + "/" + d;
    if (!isFile(p + "/model.onnx") || (!filter.empty() && d.find(filter) == std::string::npos))
      continue;
    Case c;
    c.name = d;
    c.dir = p;
    auto bytes = readFile(p + "/model.onnx");
    onnx::ModelProto m;
    if (bytes && m.ParseFromString(*bytes)) {
      c.op = opLabel(m, d);
      for (const auto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") c.opset = static_cast<int>(o.version());
    } else {
      c.op = "?";
    }
    cases.push_back(std::move(c));
  }
  if (no_fork) {
    for (auto& c : cases) c.out = runCase(c, *reg);
  } else {
    std::vector<Running> running;
    size_t next = 0;
    const auto timeout = std::chrono::seconds(300);
    while (next < cases.size() || !running.empty()) {
      while (next < cases.size() && static_cast<int>(running.size()) < jobs) {
        Running r = launch(cases, next++, *reg);
        if (r.pid > 0) running.push_back(r);
      }
      bool progressed = false;
      for (size_t i = 0; i < running.size();) {
        int status = 0;
        const pid_t w = ::waitpid(running[i].pid, &status, WNOHANG);
        bool late = w == 0 && std::chrono::steady_clock::now() - running[i].start > timeout;
        if (late) {
          ::kill(running[i].pid, SIGKILL);
          ::waitpid(running[i].pid, &status, 0);
        }
        if (w == running[i].pid || late) {
          collect(cases, running[i], status, late);
          running.erase(running.begin() + static_cast<long>(i));
          progressed = true;
        } else {
          ++i;
        }
      }
      if (!progressed) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  struct Count {
    int pass = 0, fail = 0, unsup = 0;
  };
  std::map<std::string, Count> per_op;
  int passed = 0, failed_n = 0, unsup = 0, divergent = 0;
  for (const auto& c : cases) {
    Count& k = per_op[c.op];
    if (c.out.kind == Outcome::kPassed)
      ++k.pass, ++passed;
    else if (c.out.kind == Outcome::kDivergent)
      ++divergent;
    else if (c.out.kind == Outcome::kFailed)
      ++k.fail, ++failed_n;
    else
      ++k.unsup, ++unsup;
  }
  std::printf("%-44s %7s %7s %12s\n", "op", "passed", "failed", "unsupported");
  for (const auto& [op, k] : per_op)
    std::printf("%-44s %7d %7d %12d\n", op.c_str(), k.pass, k.fail, k.unsup);
  if (verbose) {
    std::printf("\nunsupported cases:\n");
    for (const auto& c : cases)
      if (c.out.kind == Outcome::kUnsupported)
        std::printf("  %s: %s\n", c.name.c_str(), c.out.reason.c_str());
  }
  if (divergent) {
    std::printf("\ncases whose test data are off (%s; within the entry's tolerance):\n",
                g_divergence_file.c_str());
    for (const auto& c : cases)
      if (c.out.kind == Outcome::kDivergent)
        std::printf("  %s [%s]: %s\n", c.name.c_str(), c.op.c_str(), c.out.reason.c_str());
  }
  if (failed_n) {
    std::printf("\nfailed cases:\n");
    for (const auto& c : cases)
      if (c.out.kind == Outcome::kFailed)
        std::printf("  %s [%s]: %s\n", c.name.c_str(), c.op.c_str(), c.out.reason.c_str());
  }
  if (!docs.empty()) writeDocs(docs, cases, *reg, dir, passed, failed_n, unsup);
  if (passed < min_passed)
    std::printf("\nfewer cases passed (%d) than --min-passed=%d\n", passed, min_passed);
  if (g_backend == Backend::kCuda) {
    int all_gpu = 0, mixed = 0, cpu_only = 0, no_layers = 0;
    for (const auto& c : cases)
      if (c.out.kind == Outcome::kPassed) {
        const bool gpu = c.out.gpu_layers > 0, cpu = c.out.cpu_layers > 0;
        all_gpu += gpu && !cpu;
        mixed += gpu && cpu;
        cpu_only += !gpu && cpu;
        no_layers += !gpu && !cpu;
      }
    std::printf(
        "CUDA: of %d passing cases, %d ran every layer on the GPU, %d some layers on the CPU "
        "fallback, "
        "%d only CPU-fallback layers, %d no layer at all (the graph folded to constants at "
        "build)\n",
        passed, all_gpu, mixed, cpu_only, no_layers);
    if (verbose) {
      std::printf("\npassing cases with CPU-fallback layers:\n");
      for (const auto& c : cases)
        if (c.out.kind == Outcome::kPassed && c.out.cpu_layers > 0)
          std::printf("  %s: %d CUDA, %d CPU layers\n", c.name.c_str(), c.out.gpu_layers,
                      c.out.cpu_layers);
    }
  }
  std::printf("test data: %s%s\n", dataLabel(dir).c_str(),
              divergent
                  ? (", " + std::to_string(divergent) + " case(s) with documented off data").c_str()
                  : "");
  std::printf("node tests: %d passed, %d failed, %d unsupported\n", passed, failed_n, unsup);
  bool reasons_ok = true;
  if (!g_not_implemented_file.empty() && filter.empty()) {
    const auto implemented = implementedOps(*reg);
    for (const auto& name : missingOps(cases, implemented))
      if (!g_not_implemented.count(name)) {
        std::printf("not implemented, with no reason in %s: %s\n", g_not_implemented_file.c_str(),
                    name.c_str());
        reasons_ok = false;
      }
    for (const auto& [name, why] : g_not_implemented)
      if (implemented.count(name)) {
        std::printf("%s lists %s, which is implemented now: remove the line\n",
                    g_not_implemented_file.c_str(), name.c_str());
        reasons_ok = false;
      }
  }
  return failed_n == 0 && passed >= min_passed && reasons_ok ? 0 : 1;
}
