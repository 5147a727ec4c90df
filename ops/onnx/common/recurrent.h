// recurrent.h — what ONNX RNN, GRU and LSTM share: their attributes (direction, hidden_size,
// activations with activation_alpha / activation_beta, clip, layout; GRU's linear_before_reset,
// LSTM's input_forget), the checks of those attributes, the symbolic shape rule and the CPU
// reference (one plain loop per direction and batch row, every sum in double). The CUDA tactics
// are in recurrent_cuda.cuh.
//
// Tensors (layout 0; layout 1 swaps the first two axes of X, initial_h/initial_c, Y, Y_h, Y_c:
// X [batch, seq, input], Y [batch, seq, dirs, hidden], Y_h [batch, dirs, hidden]):
//   X [seq, batch, input]; W [dirs, G * hidden, input]; R [dirs, G * hidden, hidden];
//   B [dirs, 2 * G * hidden] (W's biases, then R's); sequence_lens [batch] (INT32 or INT64);
//   initial_h, initial_c [dirs, batch, hidden]; P [dirs, 3 * hidden] (LSTM peepholes i, o, f);
//   Y [seq, dirs, batch, hidden]; Y_h, Y_c [dirs, batch, hidden].
// Gates G and their order in W, R, B: RNN 1 (i); GRU 3 (z, r, h); LSTM 4 (i, o, f, c).
//
// Activations: the attribute lists A activations per direction (RNN 1: f; GRU 2: f, g; LSTM 3:
// f, g, h), the forward direction's first; defaults RNN Tanh, GRU Sigmoid Tanh, LSTM Sigmoid Tanh
// Tanh. Names (case-insensitive): Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu,
// ScaledTanh, HardSigmoid, Elu, Softsign, Softplus. activation_alpha / activation_beta are consumed
// in the order of the activations that take them (as ONNX Runtime does); an exhausted list gives
// the ONNX op's default (LeakyRelu 0.01, ThresholdedRelu 1, Elu 1, HardSigmoid 0.2 / 0.5, Affine
// 1 / 0, ScaledTanh 1 / 1). The ONNX importer hands a strings attribute over as one string, its
// elements joined by ','; the C++ API takes the same spelling ("Sigmoid,Tanh,Tanh").
//
// clip (when set, > 0) bounds every activation's input to [-clip, clip]. sequence_lens: batch row
// b runs lens[b] steps (0 <= lens[b] <= seq; the reverse direction starts at lens[b] - 1); Y is
// zero at steps >= lens[b] and Y_h / Y_c hold the state after the row's last step (the initial
// state when lens[b] is 0). Outputs the ONNX node does not list after its last listed one are
// empty tensors (_onnx_num_outputs).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "opforge/epilogue.h"
#include "util.h"

namespace opforge::ops {

enum class RnnCell : int { kRnn = 0, kGru = 1, kLstm = 2 };

enum class RnnActKind : int {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct RnnAct {
  RnnActKind kind = RnnActKind::kTanh;
  double alpha = 0, beta = 0;
};

namespace rnn_detail {
// tanh and exp in T come from the epilogue vocabulary; log1p is the recurrent ops' own.
using epilogue_detail::expT;
using epilogue_detail::tanhT;
OPFORGE_HOST_DEVICE inline float log1pT(float v) {
  return ::log1pf(v);
}
OPFORGE_HOST_DEVICE inline double log1pT(double v) {
  return ::log1p(v);
}
}  // namespace rnn_detail

// The activation in T (double in the reference; float or double on the device).
template <typename T>
OPFORGE_HOST_DEVICE inline T rnnActivate(T x, const RnnAct& f) {
  using namespace rnn_detail;
  const T a = static_cast<T>(f.alpha), b = static_cast<T>(f.beta);
  switch (f.kind) {
    case RnnActKind::kRelu:
      return x > T(0) ? x : T(0);
    case RnnActKind::kTanh:
      return tanhT(x);
    case RnnActKind::kSigmoid:
      return x >= T(0) ? T(1) / (T(1) + expT(-x)) : expT(x) / (T(1) + expT(x));
    case RnnActKind::kAffine:
      return a * x + b;
    case RnnActKind::kLeakyRelu:
      return x >= T(0) ? x : a * x;
    case RnnActKind::kThresholdedRelu:
      return x > a ? x : T(0);
    case RnnActKind::kScaledTanh:
      return a * tanhT(b * x);
    case RnnActKind::kHardSigmoid: {
      const T v = a * x + b;
      return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
    }
    case RnnActKind::kElu:
      return x >= T(0) ? x : a * (expT(x) - T(1));
    case RnnActKind::kSoftsign:
      return x / (T(1) + (x < T(0) ? -x : x));
    case RnnActKind::kSoftplus:
      return x > T(0) ? x + log1pT(expT(-x)) : log1pT(expT(x));
  }
  return x;
}

// Everything a kernel needs from the attributes, checked.
struct RnnConfig {
  RnnCell cell = RnnCell::kRnn;
  int gates = 1;         // G
  int acts_per_dir = 1;  // A
  int dirs = 1;          // 2 for bidirectional
  bool reverse = false;  // direction "reverse" (one direction, run backwards)
  int64_t hidden = -1;   // hidden_size, -1 when the attribute is absent (R tells)
  bool layout1 = false;  // layout = 1: batch first
  bool has_clip = false;
  double clip = 0;
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
  RnnAct act[2][3];                  // [direction][activation]
};

inline const char* rnnOpName(RnnCell c) {
  return c == RnnCell::kRnn ? "RNN" : c == RnnCell::kGru ? "GRU" : "LSTM";
}

namespace rnn_detail {
inline std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
inline std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = std::min(s.find(',', a), s.size());
    std::string item = s.substr(a, b - a);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.erase(item.begin());
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    out.push_back(item);
    a = b + 1;
  }
  return out;
}
// Parses one activation name; uses (alpha, beta) from the lists in order.
inline Result<RnnAct> parseAct(const std::string& name, const std::vector<float>& alphas,
                               const std::vector<float>& betas, size_t& ai, size_t& bi) {
  struct Known {
    const char* name;
    RnnActKind kind;
    int takes;  // 0 none, 1 alpha, 2 alpha and beta
    double alpha, beta;
  };
  static const Known kKnown[] = {
      {"relu", RnnActKind::kRelu, 0, 0, 0},
      {"tanh", RnnActKind::kTanh, 0, 0, 0},
      {"sigmoid", RnnActKind::kSigmoid, 0, 0, 0},
      {"affine", RnnActKind::kAffine, 2, 1.0, 0.0},
      {"leakyrelu", RnnActKind::kLeakyRelu, 1, 0.01, 0},
      {"thresholdedrelu", RnnActKind::kThresholdedRelu, 1, 1.0, 0},
      {"scaledtanh", RnnActKind::kScaledTanh, 2, 1.0, 1.0},
      {"hardsigmoid", RnnActKind::kHardSigmoid, 2, 0.2, 0.5},
      {"elu", RnnActKind::kElu, 1, 1.0, 0},
      {"softsign", RnnActKind::kSoftsign, 0, 0, 0},
      {"softplus", RnnActKind::kSoftplus, 0, 0, 0},
  };
  const std::string n = lower(name);
  for (const auto& k : kKnown) {
    if (n != k.name) continue;
    RnnAct a{k.kind, k.alpha, k.beta};
    if (k.takes >= 1 && ai < alphas.size()) a.alpha = alphas[ai++];
    if (k.takes >= 2 && bi < betas.size()) a.beta = betas[bi++];
    if (!std::isfinite(a.alpha) || !std::isfinite(a.beta))
      return Status::invalid("activation '" + name + "' has a non-finite alpha or beta");
    return a;
  }
  return Status::invalid(
      "attribute 'activations' names '" + name +
      "', which is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
      "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
}
}  // namespace rnn_detail

// Reads and checks the attributes (the op's check and every kernel call).
inline Result<RnnConfig> rnnConfig(const AttrMap& a, RnnCell cell) {
  RnnConfig c;
  c.cell = cell;
  c.gates = cell == RnnCell::kRnn ? 1 : cell == RnnCell::kGru ? 3 : 4;
  c.acts_per_dir = cell == RnnCell::kRnn ? 1 : cell == RnnCell::kGru ? 2 : 3;
  const std::string dir = a.get<std::string>("direction");
  if (dir == "forward") {
    c.dirs = 1;
  } else if (dir == "reverse") {
    c.dirs = 1;
    c.reverse = true;
  } else if (dir == "bidirectional") {
    c.dirs = 2;
  } else {
    return Status::invalid(
        "attribute 'direction' must be forward, reverse or bidirectional, got '" + dir + "'");
  }
  if (a.has("hidden_size")) {
    c.hidden = a.get<int64_t>("hidden_size");
    if (c.hidden < 1 || c.hidden > (int64_t{1} << 24))
      return Status::invalid("attribute 'hidden_size' must be in [1, 2^24], got " +
                             std::to_string(c.hidden));
  }
  const int64_t layout = a.get<int64_t>("layout");
  if (layout != 0 && layout != 1)
    return Status::invalid("attribute 'layout' must be 0 or 1, got " + std::to_string(layout));
  c.layout1 = layout == 1;
  if (a.has("clip")) {
    c.clip = a.get<double>("clip");
    if (!(c.clip > 0) || std::isinf(c.clip))
      return Status::invalid("attribute 'clip' must be a finite value above 0, got " +
                             std::to_string(c.clip));
    c.has_clip = true;
  }
  if (cell == RnnCell::kLstm) {
    const int64_t v = a.get<int64_t>("input_forget");
    if (v != 0 && v != 1)
      return Status::invalid("attribute 'input_forget' must be 0 or 1, got " + std::to_string(v));
    c.input_forget = v == 1;
  }
  if (cell == RnnCell::kGru) {
    const int64_t v = a.get<int64_t>("linear_before_reset");
    if (v != 0 && v != 1)
      return Status::invalid("attribute 'linear_before_reset' must be 0 or 1, got " +
                             std::to_string(v));
    c.linear_before_reset = v == 1;
  }
  std::vector<std::string> names;
  if (a.has("activations")) {
    names = rnn_detail::splitList(a.get<std::string>("activations"));
  } else {
    static const char* kDefault[3][3] = {
        {"Tanh", "", ""}, {"Sigmoid", "Tanh", ""}, {"Sigmoid", "Tanh", "Tanh"}};
    for (int d = 0; d < c.dirs; ++d)
      for (int i = 0; i < c.acts_per_dir; ++i) names.push_back(kDefault[static_cast<int>(cell)][i]);
  }
  const size_t want = static_cast<size_t>(c.acts_per_dir * c.dirs);
  if (names.size() != want)
    return Status::invalid("attribute 'activations' must list " + std::to_string(want) +
                           " functions (" + std::to_string(c.acts_per_dir) + " per direction, " +
                           std::to_string(c.dirs) + " direction(s)), got " +
                           std::to_string(names.size()));
  const std::vector<float> alphas = a.has("activation_alpha")
                                        ? a.get<std::vector<float>>("activation_alpha")
                                        : std::vector<float>{};
  const std::vector<float> betas = a.has("activation_beta")
                                       ? a.get<std::vector<float>>("activation_beta")
                                       : std::vector<float>{};
  size_t ai = 0, bi = 0;
  for (int d = 0; d < c.dirs; ++d)
    for (int i = 0; i < c.acts_per_dir; ++i) {
      OPFORGE_ASSIGN_OR_RETURN(
          c.act[d][i], rnn_detail::parseAct(names[static_cast<size_t>(d * c.acts_per_dir + i)],
                                            alphas, betas, ai, bi));
    }
  return c;
}

// The attributes, inputs and outputs every recurrent op declares (the op adds its own after).
inline OpDef& rnnCommonAttrs(OpDef& d) {
  return d.attr<std::string>("direction", std::string("forward"), "forward|reverse|bidirectional")
      .optionalAttr<int64_t>("hidden_size", "hidden units (else R's last axis)")
      .optionalAttr<std::string>("activations", "names joined by ','")
      .optionalAttr<std::vector<float>>("activation_alpha")
      .optionalAttr<std::vector<float>>("activation_beta")
      .optionalAttr<double>("clip", "bound of every activation's input")
      .attr<int64_t>("layout", int64_t{0}, "0: [seq, batch, ...]; 1: [batch, seq, ...]");
}

// Input positions.
constexpr int kRnnX = 0, kRnnW = 1, kRnnR = 2, kRnnB = 3, kRnnLens = 4, kRnnH0 = 5, kRnnC0 = 6,
              kRnnP = 7;

// The symbolic shape rule of every recurrent op.
inline Result<std::vector<SymDesc>> rnnShape(ShapeContext& c, RnnCell cell) {
  auto cfg_r = rnnConfig(c.attrs(), cell);
  if (!cfg_r) return c.error(cfg_r.status().message());
  const RnnConfig cfg = *cfg_r;
  const SymDesc x = c.input(kRnnX), w = c.input(kRnnW), r = c.input(kRnnR);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
  if (x.rank() != 3)
    return c.error("input 'X' must have rank 3 (" +
                   std::string(cfg.layout1 ? "[batch, seq, input]" : "[seq, batch, input]") +
                   "), got " + toString(x.dims));
  for (const auto& [nm, t] : {std::pair<const char*, const SymDesc*>{"W", &w}, {"R", &r}}) {
    if (t->dtype != x.dtype)
      return c.error(std::string("input '") + nm + "' has type " + dtypeName(t->dtype) +
                     "; X has " + dtypeName(x.dtype));
    if (t->rank() != 3)
      return c.error(std::string("input '") + nm + "' must have rank 3, got " + toString(t->dims));
  }
  const DimExpr seq = cfg.layout1 ? x.dim(1) : x.dim(0), batch = cfg.layout1 ? x.dim(0) : x.dim(1);
  DimExpr hidden = r.dim(2);
  if (cfg.hidden > 0) {
    if (r.dim(2).isConst() && r.dim(2).constValue() != cfg.hidden)
      return c.error("input 'R' " + toString(r.dims) + " does not match hidden_size " +
                     std::to_string(cfg.hidden) + " (its last axis must be hidden_size)");
    hidden = DimExpr(cfg.hidden);
  }
  if (!hidden.isConst())
    return c.error(
        "the hidden size must be known when the network is built (hidden_size, or "
        "input 'R''s last axis)");
  const int64_t H = hidden.constValue(), G = cfg.gates;
  const std::string dirs_note = " (" + std::to_string(cfg.dirs) + " direction(s))";
  auto checkDims = [&](const char* nm, const SymDesc& t,
                       const std::vector<DimExpr>& want) -> Status {
    if (t.rank() != static_cast<int>(want.size()))
      return c.error(std::string("input '") + nm + "' must have shape " + toString(want) +
                     dirs_note + ", got " + toString(t.dims));
    for (size_t i = 0; i < want.size(); ++i)
      OPFORGE_RETURN_IF_ERROR(requireEq(
          c, t.dims[i], want[i],
          std::string("input '") + nm + "' must have shape " + toString(want) + dirs_note));
    return Status::ok();
  };
  const DimExpr D = cfg.dirs;
  OPFORGE_RETURN_IF_ERROR(checkDims("W", w, {D, G * H, x.dim(2)}));
  OPFORGE_RETURN_IF_ERROR(checkDims("R", r, {D, G * H, H}));
  if (c.hasInput(kRnnB)) {
    const SymDesc b = c.input(kRnnB);
    if (b.dtype != x.dtype)
      return c.error("input 'B' has type " + dtypeName(b.dtype) + "; X has " + dtypeName(x.dtype));
    OPFORGE_RETURN_IF_ERROR(checkDims("B", b, {D, 2 * G * H}));
  }
  if (c.hasInput(kRnnLens)) {
    const SymDesc l = c.input(kRnnLens);
    if (!isIntIndex(l.dtype))
      return c.error("input 'sequence_lens' must be INT32 or INT64, got " + dtypeName(l.dtype));
    OPFORGE_RETURN_IF_ERROR(checkDims("sequence_lens", l, {batch}));
  }
  const std::vector<DimExpr> state =
      cfg.layout1 ? std::vector<DimExpr>{batch, D, H} : std::vector<DimExpr>{D, batch, H};
  const int states = cell == RnnCell::kLstm ? 2 : 1;
  for (int s = 0; s < states; ++s) {
    const int at = s == 0 ? kRnnH0 : kRnnC0;
    if (!c.hasInput(at)) continue;
    const char* nm = s == 0 ? "initial_h" : "initial_c";
    const SymDesc t = c.input(at);
    if (t.dtype != x.dtype)
      return c.error(std::string("input '") + nm + "' has type " + dtypeName(t.dtype) + "; X has " +
                     dtypeName(x.dtype));
    OPFORGE_RETURN_IF_ERROR(checkDims(nm, t, state));
  }
  if (cell == RnnCell::kLstm && c.hasInput(kRnnP)) {
    const SymDesc p = c.input(kRnnP);
    if (p.dtype != x.dtype)
      return c.error("input 'P' has type " + dtypeName(p.dtype) + "; X has " + dtypeName(x.dtype));
    OPFORGE_RETURN_IF_ERROR(checkDims("P", p, {D, 3 * H}));
  }
  std::vector<SymDesc> out;
  out.push_back(SymDesc::make(x.dtype, cfg.layout1 ? std::vector<DimExpr>{batch, seq, D, H}
                                                   : std::vector<DimExpr>{seq, D, batch, H}));
  for (int s = 0; s < states; ++s) out.push_back(SymDesc::make(x.dtype, state));
  // Outputs after the last one the ONNX node lists are empty.
  const int64_t listed = c.attr<int64_t>("_onnx_num_outputs");
  for (size_t i = 0; i < out.size(); ++i)
    if (listed > 0 && listed <= static_cast<int64_t>(i)) out[i].dims = {0};
  OPFORGE_RETURN_IF_ERROR(checkElementCount(c, out[0].dims, "output 'Y'"));
  return out;
}

// Concrete sizes of a call.
struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
};
inline RnnDims rnnDims(const RnnConfig& cfg, std::span<const TensorDesc> in) {
  RnnDims d;
  const auto& x = in[kRnnX].dims;
  d.seq = cfg.layout1 ? x[1] : x[0];
  d.batch = cfg.layout1 ? x[0] : x[1];
  d.input = x[2];
  d.hidden = in[kRnnR].dims[2];
  return d;
}

// Element offsets shared by the reference and the kernels.
OPFORGE_HOST_DEVICE inline int64_t rnnXRow(bool layout1, int64_t seq, int64_t batch, int64_t t,
                                           int64_t b) {
  return layout1 ? b * seq + t : t * batch + b;
}
OPFORGE_HOST_DEVICE inline int64_t rnnYAt(bool layout1, int64_t seq, int dirs, int64_t batch,
                                          int64_t hidden, int64_t t, int d, int64_t b, int64_t j) {
  (void)batch;
  return (layout1 ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden + j;
}
OPFORGE_HOST_DEVICE inline int64_t rnnStateAt(bool layout1, int dirs, int64_t batch, int64_t hidden,
                                              int d, int64_t b, int64_t j) {
  return (layout1 ? b * dirs + d : d * batch + b) * hidden + j;
}

// Checks sequence_lens against the sequence length; the lengths (seq for every row without it).
inline Result<std::vector<int64_t>> rnnLengths(std::span<const Tensor> in, int64_t seq,
                                               int64_t batch) {
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (!hasIn(in, kRnnLens)) return lens;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t v = readIndex(in[kRnnLens].data, in[kRnnLens].desc.dtype, b);
    if (v < 0 || v > seq)
      return Status::outOfRange("input 'sequence_lens' holds " + std::to_string(v) +
                                " at position " + std::to_string(b) + ", outside [0, " +
                                std::to_string(seq) + "] (X's sequence length)");
    lens[static_cast<size_t>(b)] = v;
  }
  return lens;
}

// The CPU reference: per direction and batch row, step by step, in double.
inline Status rnnReference(const AttrMap& attrs, RnnCell cell, std::span<const Tensor> in,
                           std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(RnnConfig cfg, rnnConfig(attrs, cell));
  std::vector<TensorDesc> descs;
  for (const auto& t : in) descs.push_back(t.desc);
  const RnnDims n = rnnDims(cfg, descs);
  const int64_t H = n.hidden, G = cfg.gates, I = n.input;
  OPFORGE_ASSIGN_OR_RETURN(auto lens, rnnLengths(in, n.seq, n.batch));
  auto load = [&](int i) {
    std::vector<double> v;
    if (hasIn(in, static_cast<size_t>(i))) v = readDoubles(in[static_cast<size_t>(i)]);
    return v;
  };
  const std::vector<double> X = load(kRnnX), W = load(kRnnW), R = load(kRnnR), B = load(kRnnB),
                            H0 = load(kRnnH0),
                            C0 = cell == RnnCell::kLstm ? load(kRnnC0) : std::vector<double>{},
                            P = cell == RnnCell::kLstm ? load(kRnnP) : std::vector<double>{};
  const bool has_y = out.size() > 0 && out[0].numel() > 0;
  const bool has_yh = out.size() > 1 && out[1].numel() > 0;
  const bool has_yc = out.size() > 2 && out[2].numel() > 0;
  const DataType dt = in[kRnnX].desc.dtype;
  if (has_y)  // zero at the steps past a row's length
    for (int64_t i = 0; i < out[0].numel(); ++i) storeFromDouble(out[0].data, dt, i, 0.0);
  auto clip = [&](double v) {
    return cfg.has_clip ? std::min(std::max(v, -cfg.clip), cfg.clip) : v;
  };
  std::vector<double> h(static_cast<size_t>(H)), cst(static_cast<size_t>(H)),
      pre(static_cast<size_t>(G * H)), rh(static_cast<size_t>(H));
  for (int d = 0; d < cfg.dirs; ++d) {
    const bool rev = cfg.dirs == 2 ? d == 1 : cfg.reverse;
    const double* w = W.data() + d * G * H * I;
    const double* r = R.data() + d * G * H * H;
    const double* wb = B.empty() ? nullptr : B.data() + d * 2 * G * H;
    const double* rb = wb ? wb + G * H : nullptr;
    const RnnAct* act = cfg.act[d];
    for (int64_t b = 0; b < n.batch; ++b) {
      for (int64_t j = 0; j < H; ++j) {
        const int64_t s = rnnStateAt(cfg.layout1, cfg.dirs, n.batch, H, d, b, j);
        h[j] = H0.empty() ? 0.0 : H0[s];
        cst[j] = C0.empty() ? 0.0 : C0[s];
      }
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = rev ? len - 1 - step : step;
        const double* x = X.data() + rnnXRow(cfg.layout1, n.seq, n.batch, t, b) * I;
        // pre[g * H + j] = x . W[g * H + j] + Wb; plus h . R[g * H + j] + Rb except GRU's h gate
        for (int64_t row = 0; row < G * H; ++row) {
          double s = wb ? wb[row] : 0.0;
          for (int64_t k = 0; k < I; ++k) s += x[k] * w[row * I + k];
          const bool gru_h = cell == RnnCell::kGru && row >= 2 * H;
          if (!gru_h) {
            if (rb) s += rb[row];
            for (int64_t k = 0; k < H; ++k) s += h[k] * r[row * H + k];
          }
          pre[row] = s;
        }
        if (cell == RnnCell::kRnn) {
          for (int64_t j = 0; j < H; ++j) h[j] = rnnActivate(clip(pre[j]), act[0]);
        } else if (cell == RnnCell::kGru) {
          std::vector<double> z(static_cast<size_t>(H)), rr(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[j] = rnnActivate(clip(pre[j]), act[0]);
            rr[j] = rnnActivate(clip(pre[H + j]), act[0]);
            rh[j] = rr[j] * h[j];
          }
          std::vector<double> hn(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            const double* rrow = r + (2 * H + j) * H;
            const double rbh = rb ? rb[2 * H + j] : 0.0;
            double s = 0;
            if (cfg.linear_before_reset) {
              for (int64_t k = 0; k < H; ++k) s += h[k] * rrow[k];
              s = rr[j] * (s + rbh);
            } else {
              for (int64_t k = 0; k < H; ++k) s += rh[k] * rrow[k];
              s += rbh;
            }
            const double hh = rnnActivate(clip(pre[2 * H + j] + s), act[1]);
            hn[j] = (1.0 - z[j]) * hh + z[j] * h[j];
          }
          h = hn;
        } else {  // LSTM: i, o, f, c
          const double* p = P.empty() ? nullptr : P.data() + d * 3 * H;
          for (int64_t j = 0; j < H; ++j) {
            const double pi = p ? p[j] : 0.0, po = p ? p[H + j] : 0.0, pf = p ? p[2 * H + j] : 0.0;
            const double f = rnnActivate(clip(pre[2 * H + j] + pf * cst[j]), act[0]);
            const double i =
                cfg.input_forget ? 1.0 - f : rnnActivate(clip(pre[j] + pi * cst[j]), act[0]);
            const double g = rnnActivate(clip(pre[3 * H + j]), act[1]);
            cst[j] = f * cst[j] + i * g;
            const double o = rnnActivate(clip(pre[H + j] + po * cst[j]), act[0]);
            h[j] = o * rnnActivate(cst[j], act[2]);
          }
        }
        if (has_y)
          for (int64_t j = 0; j < H; ++j)
            storeFromDouble(out[0].data, dt,
                            rnnYAt(cfg.layout1, n.seq, cfg.dirs, n.batch, H, t, d, b, j), h[j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        const int64_t s = rnnStateAt(cfg.layout1, cfg.dirs, n.batch, H, d, b, j);
        if (has_yh) storeFromDouble(out[1].data, dt, s, h[j]);
        if (has_yc) storeFromDouble(out[2].data, dt, s, cst[j]);
      }
    }
  }
  return Status::ok();
}

}  // namespace opforge::ops
