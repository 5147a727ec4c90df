// ONNX Attention (opsets 23-25): scaled dot-product attention with grouped key/value heads, a KV
// cache, masks and soft-capping, as the ONNX reference defines it:
//   Q, K, V 4-D [B, H, S, size], or 3-D [B, S, H * size] with q_num_heads / kv_num_heads;
//   K_all = Concat(past_key, K) on the sequence axis (present_key; likewise V), T = past + Skv
//   keys; query head h reads key/value head h / (Hq / Hkv) (GQA; Hkv divides Hq); S = (Q s)(K_all
//   s)^T with s = sqrt(scale) rounded to Q's type (scale: 1 / sqrt(head size)); softcap > 0: S =
//   softcap * tanh(S / softcap); S += bias, bias = attn_mask (BOOL: true 0, false -inf; float:
//   added; its last axis shorter than T is padded with -inf) + -inf where the key is not allowed:
//   is_causal (key j <= i + offset), left/right_window_size (opset 25: offset + i - j in [-right,
//   left]), and keys j >= nonpad_kv_seqlen[b] (opset 24); offset = nonpad_kv_seqlen[b] - Sq when
//   that input is given, else the past length; P = Softmax(S) over the keys; a row whose bias is
//   -inf everywhere gives P = 0 (Y = 0); Y = P V_all (3-D: heads merged back, [B, Sq, Hq * dv]).
// qk_matmul_output: mode 0 and 1 S before the bias (after softcap), 2 S with the bias, 3 P.
// softmax_precision is accepted (the reference computes in double). Outputs the node does not
// list after its last listed one are empty. CPU reference: per (batch, head), Q and K scaled and
// gathered into FP64, then MatMul, Softmax and MatMul by their ops' references
// (matmul.h, softmax.h); softcap and the bias in double between them.
#include "attention.h"

#include <vector>

#include "../common/util.h"
#include "../matmul/matmul.h"
#include "../softmax/softmax.h"

namespace opforge::ops {

constexpr int kAttnQ = 0, kAttnK = 1, kAttnV = 2, kAttnMask = 3, kAttnPastK = 4, kAttnPastV = 5,
              kAttnNonpad = 6;

// The geometry of a call (also used by attention.cu); the shapes were checked by the shape rule.
OnnxAttn onnxAttnGeom(const AttrMap& a, std::span<const TensorDesc> in) {
  OnnxAttn g;
  const auto &q = in[kAttnQ].dims, &k = in[kAttnK].dims, &v = in[kAttnV].dims;
  auto present = [&](int i) {
    return static_cast<int>(in.size()) > i && in[i].dtype != DataType::kUndefined;
  };
  g.B = q[0];
  g.in3d = q.size() == 3;
  if (g.in3d) {
    g.Hq = a.get<int64_t>("q_num_heads");
    g.Hkv = a.get<int64_t>("kv_num_heads");
    g.Sq = q[1], g.Skv = k[1];
    g.d = q[2] / g.Hq, g.dv = v[2] / g.Hkv;
  } else {
    g.Hq = q[1], g.Hkv = k[1], g.Sq = q[2], g.Skv = k[2], g.d = q[3], g.dv = v[3];
  }
  g.P = present(kAttnPastK) ? in[kAttnPastK].dims[2] : 0;
  g.T = g.P + g.Skv;
  g.causal = a.get<int64_t>("is_causal") != 0;
  g.left = a.get<int64_t>("left_window_size");
  g.right = a.get<int64_t>("right_window_size");
  g.has_nonpad = present(kAttnNonpad);
  g.softcap = a.get<double>("softcap");
  g.mode = static_cast<int>(a.get<int64_t>("qk_matmul_output_mode"));
  const double scale = a.has("scale") ? a.get<double>("scale")
                                      : 1.0 / std::sqrt(static_cast<double>(g.d > 0 ? g.d : 1));
  // sqrt(scale) in Q's type, as the ONNX function body casts it.
  double s = std::sqrt(scale);
  uint8_t buf[8];
  storeFromDouble(buf, in[kAttnQ].dtype, 0, s);
  g.scale_sqrt = loadAsDouble(buf, in[kAttnQ].dtype, 0);
  if (present(kAttnMask)) {
    const auto& m = in[kAttnMask].dims;
    g.has_mask = true;
    g.mask_bool = in[kAttnMask].dtype == DataType::kBool;
    g.mask_len = m.empty() ? 1 : m.back();
    const auto st = broadcastStrides(m, {g.B, g.Hq, g.Sq, g.mask_len});
    for (int i = 0; i < 4; ++i) g.ms[i] = st[i];
  }
  return g;
}

namespace {

Result<std::vector<SymDesc>> attentionShape(ShapeContext& c) {
  const SymDesc q = c.input(kAttnQ), k = c.input(kAttnK), v = c.input(kAttnV);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'Q'", q.dtype, kFloats));
  if (k.dtype != q.dtype || v.dtype != q.dtype)
    return c.error("Q, K and V must have one type, got " + dtypeName(q.dtype) + ", " +
                   dtypeName(k.dtype) + ", " + dtypeName(v.dtype));
  if ((q.rank() != 3 && q.rank() != 4) || k.rank() != q.rank() || v.rank() != q.rank())
    return c.error(
        "Q, K and V must all be 3-D [batch, seq, hidden] or all 4-D [batch, heads, "
        "seq, head size], got " +
        toString(q.dims) + ", " + toString(k.dims) + ", " + toString(v.dims));
  const bool in3d = q.rank() == 3;
  const bool has_qh = c.attrs().has("q_num_heads"), has_kvh = c.attrs().has("kv_num_heads");
  DimExpr B = q.dim(0), Hq, Hkv, Sq, Skv, d, dk, dv;
  if (in3d) {
    if (!has_qh || !has_kvh)
      return c.error("3-D inputs need the attributes q_num_heads and kv_num_heads");
    const int64_t hq = c.attr<int64_t>("q_num_heads"), hkv = c.attr<int64_t>("kv_num_heads");
    if (hq < 1 || hkv < 1)
      return c.error("q_num_heads and kv_num_heads must be at least 1, got " + std::to_string(hq) +
                     " and " + std::to_string(hkv));
    Hq = hq, Hkv = hkv, Sq = q.dim(1), Skv = k.dim(1);
    struct Split {
      const char* name;
      const SymDesc* t;
      int64_t heads;
      DimExpr* out;
    };
    for (const Split& s :
         {Split{"Q", &q, hq, &d}, Split{"K", &k, hkv, &dk}, Split{"V", &v, hkv, &dv}}) {
      const DimExpr hidden = s.t->dim(2);
      if (hidden.isConst() && hidden.constValue() % s.heads != 0)
        return c.error(std::string("input '") + s.name + "' has hidden size " + hidden.toString() +
                       ", not a multiple of its " + std::to_string(s.heads) + " heads");
      *s.out = floorDiv(hidden, DimExpr(s.heads));
      OPFORGE_RETURN_IF_ERROR(requireEq(
          c, *s.out * s.heads, hidden,
          std::string("input '") + s.name + "''s hidden size must be a multiple of its heads"));
    }
    OPFORGE_RETURN_IF_ERROR(requireEq(c, k.dim(0), B, "K's batch must be Q's"));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(0), B, "V's batch must be Q's"));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(1), Skv, "K and V must have one length"));
  } else {
    Hq = q.dim(1), Hkv = k.dim(1), Sq = q.dim(2), Skv = k.dim(2), d = q.dim(3), dk = k.dim(3),
    dv = v.dim(3);
    if (has_qh && q.dim(1).isConst() && c.attr<int64_t>("q_num_heads") != q.dim(1).constValue())
      return c.error("q_num_heads " + std::to_string(c.attr<int64_t>("q_num_heads")) +
                     " differs from Q's heads " + toString(q.dims));
    if (has_kvh && k.dim(1).isConst() && c.attr<int64_t>("kv_num_heads") != k.dim(1).constValue())
      return c.error("kv_num_heads " + std::to_string(c.attr<int64_t>("kv_num_heads")) +
                     " differs from K's heads " + toString(k.dims));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, k.dim(0), B, "K's batch must be Q's"));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(0), B, "V's batch must be Q's"));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(1), Hkv, "K and V must have one head count"));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, v.dim(2), Skv, "K and V must have one length"));
  }
  OPFORGE_RETURN_IF_ERROR(requireEq(c, dk, d, "K's head size must be Q's"));
  if (Hq.isConst() && Hkv.isConst()) {
    if (Hkv.constValue() < 1 || Hq.constValue() % Hkv.constValue() != 0)
      return c.error("the key/value heads (" + Hkv.toString() + ") must divide the query heads (" +
                     Hq.toString() + ")");
  } else {
    OPFORGE_RETURN_IF_ERROR(requireEq(c, floorDiv(Hq, Hkv) * Hkv, Hq,
                                      "the key/value heads must divide the query heads"));
  }
  DimExpr T = Skv;
  const bool has_past = c.hasInput(kAttnPastK), has_pastv = c.hasInput(kAttnPastV);
  if (has_past != has_pastv) return c.error("past_key and past_value must be given together");
  if (has_past) {
    const SymDesc pk = c.input(kAttnPastK), pv = c.input(kAttnPastV);
    if (pk.dtype != q.dtype || pv.dtype != q.dtype)
      return c.error("past_key and past_value must have Q's type " + dtypeName(q.dtype));
    if (pk.rank() != 4 || pv.rank() != 4)
      return c.error("past_key and past_value must be 4-D [batch, kv heads, past, size], got " +
                     toString(pk.dims) + " and " + toString(pv.dims));
    const std::vector<std::pair<const char*, std::vector<DimExpr>>> want = {
        {"past_key", {B, Hkv, pk.dim(2), d}}, {"past_value", {B, Hkv, pk.dim(2), dv}}};
    for (int i = 0; i < 2; ++i) {
      const SymDesc& t = i == 0 ? pk : pv;
      for (int a = 0; a < 4; ++a)
        OPFORGE_RETURN_IF_ERROR(requireEq(c, t.dim(a), want[i].second[a],
                                          std::string("input '") + want[i].first +
                                              "' must have shape " + toString(want[i].second)));
    }
    T = pk.dim(2) + Skv;
  }
  if (c.hasInput(kAttnNonpad)) {
    if (has_past) return c.error("nonpad_kv_seqlen cannot be combined with past_key / past_value");
    const SymDesc n = c.input(kAttnNonpad);
    if (!isIntIndex(n.dtype))
      return c.error("input 'nonpad_kv_seqlen' must be INT64, got " + dtypeName(n.dtype));
    if (n.rank() != 1)
      return c.error("input 'nonpad_kv_seqlen' must be 1-D [batch], got " + toString(n.dims));
    OPFORGE_RETURN_IF_ERROR(requireEq(c, n.dim(0), B, "input 'nonpad_kv_seqlen' must be [batch]"));
  }
  if (c.hasInput(kAttnMask)) {
    const SymDesc m = c.input(kAttnMask);
    if (m.dtype != DataType::kBool && !inTypeSet(m.dtype, kFloats))
      return c.error("input 'attn_mask' must be BOOL or a float type, got " + dtypeName(m.dtype));
    if (m.rank() < 1 || m.rank() > 4)
      return c.error("input 'attn_mask' must have rank 1 to 4, got " + toString(m.dims));
    const std::vector<DimExpr> lead = {B, Hq, Sq};
    for (int a = 0; a + 1 < m.rank(); ++a) {
      const DimExpr& md = m.dims[a];
      const DimExpr& td = lead[3 - (m.rank() - 1) + a];
      if (isConstEq(md, 1)) continue;
      OPFORGE_RETURN_IF_ERROR(requireEq(c, md, td,
                                        "input 'attn_mask' " + toString(m.dims) +
                                            " must broadcast to [batch, q heads, q length, "
                                            "keys] " +
                                            toString(std::vector<DimExpr>{B, Hq, Sq, T})));
    }
    if (m.dim(-1).isConst() && T.isConst() && m.dim(-1).constValue() > T.constValue())
      return c.error("input 'attn_mask' has " + m.dim(-1).toString() + " keys; there are only " +
                     T.toString() + " (past + new)");
    if (!(m.dim(-1).isConst() && T.isConst()))
      c.require(m.dim(-1), DimAssertion::Op::kLe, T,
                "input 'attn_mask' must not have more keys than past + new");
  }
  const int64_t mode = c.attr<int64_t>("qk_matmul_output_mode");
  if (mode < 0 || mode > 3)
    return c.error("qk_matmul_output_mode must be 0, 1, 2 or 3, got " + std::to_string(mode));
  for (const char* w : {"left_window_size", "right_window_size"})
    if (c.attr<int64_t>(w) < -1)
      return c.error(std::string(w) + " must be -1 or at least 0, got " +
                     std::to_string(c.attr<int64_t>(w)));
  const double softcap = c.attr<double>("softcap");
  if (!(softcap >= 0) || std::isinf(softcap))
    return c.error("softcap must be finite and >= 0, got " + std::to_string(softcap));
  if (c.attrs().has("scale") && !std::isfinite(c.attr<double>("scale")))
    return c.error("scale must be finite");
  if (c.attrs().has("scale") && c.attr<double>("scale") < 0)
    return c.error("scale must not be negative (Q and K are each scaled by its square root), got " +
                   std::to_string(c.attr<double>("scale")));
  if (c.attrs().has("softmax_precision")) {
    const int64_t p = c.attr<int64_t>("softmax_precision");
    if (p != 1 && p != 10 && p != 11 && p != 16)
      return c.error("softmax_precision must name a float type (1, 10, 11 or 16), got " +
                     std::to_string(p));
  }
  std::vector<SymDesc> out;
  out.push_back(SymDesc::make(
      q.dtype, in3d ? std::vector<DimExpr>{B, Sq, Hq * dv} : std::vector<DimExpr>{B, Hq, Sq, dv}));
  out.push_back(SymDesc::make(q.dtype, {B, Hkv, T, d}));
  out.push_back(SymDesc::make(q.dtype, {B, Hkv, T, dv}));
  out.push_back(SymDesc::make(q.dtype, {B, Hq, Sq, T}));
  const int64_t listed = c.attr<int64_t>("_onnx_num_outputs");
  for (size_t i = 0; i < out.size(); ++i)
    if (listed > 0 && listed <= static_cast<int64_t>(i)) out[i].dims = {0};
  OPFORGE_RETURN_IF_ERROR(checkElementCount(c, out[3].dims, "the attention scores"));
  return out;
}

Status attentionReference(KernelContext& kc, std::span<const Tensor> in,
                          std::span<const Tensor> out) {
  std::vector<TensorDesc> descs;
  for (const auto& t : in) descs.push_back(t.desc);
  const OnnxAttn g = onnxAttnGeom(kc.attrs(), descs);
  const DataType dt = in[kAttnQ].desc.dtype;
  std::vector<int64_t> nonpad(static_cast<size_t>(g.B), 0);
  if (g.has_nonpad)
    for (int64_t b = 0; b < g.B; ++b) {
      nonpad[b] = readIndex(in[kAttnNonpad].data, in[kAttnNonpad].desc.dtype, b);
      if (nonpad[b] < 0 || nonpad[b] > g.T)
        return Status::outOfRange("input 'nonpad_kv_seqlen' holds " + std::to_string(nonpad[b]) +
                                  " at position " + std::to_string(b) + ", outside [0, " +
                                  std::to_string(g.T) + "] (the key count)");
    }
  // Key / value element (b, kv head, t, c) of the concatenated cache.
  auto kv = [&](bool value, int64_t b, int64_t h, int64_t t, int64_t c) {
    const int64_t w = value ? g.dv : g.d;
    if (t < g.P)
      return loadAsDouble(in[value ? kAttnPastV : kAttnPastK].data, dt, g.pastAt(b, h, t, c, w));
    return loadAsDouble(in[value ? kAttnV : kAttnK].data, dt, g.kAt(b, h, t - g.P, c, w));
  };
  for (int v = 0; v < 2; ++v) {  // present_key, present_value
    const Tensor& o = out[1 + v];
    if (o.numel() == 0) continue;
    const int64_t w = v ? g.dv : g.d;
    for (int64_t b = 0; b < g.B; ++b)
      for (int64_t h = 0; h < g.Hkv; ++h)
        for (int64_t t = 0; t < g.T; ++t)
          for (int64_t c = 0; c < w; ++c)
            storeFromDouble(o.data, dt, g.presentAt(b, h, t, c, w), kv(v == 1, b, h, t, c));
  }
  std::vector<double> qb, kb, vb, sb, ob, bias(static_cast<size_t>(g.Sq * g.T));
  auto f64 = [](std::vector<double>& buf, int64_t rows, int64_t cols) {
    buf.resize(static_cast<size_t>(rows * cols));
    return Tensor{TensorDesc{DataType::kFloat64, {rows, cols}}, buf.data(), Device::kCpu};
  };
  const Tensor tq = f64(qb, g.Sq, g.d), tkt = f64(kb, g.d, g.T), tv = f64(vb, g.T, g.dv),
               ts = f64(sb, g.Sq, g.T), to = f64(ob, g.Sq, g.dv);
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor& qk = out[3];
  const bool want_qk = qk.numel() > 0;
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t h = 0; h < g.Hq; ++h) {
      const int64_t kvh = h / g.group();
      for (int64_t i = 0; i < g.Sq; ++i)
        for (int64_t c = 0; c < g.d; ++c)
          qb[i * g.d + c] = loadAsDouble(in[kAttnQ].data, dt, g.qAt(b, h, i, c)) * g.scale_sqrt;
      for (int64_t t = 0; t < g.T; ++t) {
        for (int64_t c = 0; c < g.d; ++c) kb[c * g.T + t] = kv(false, b, kvh, t, c) * g.scale_sqrt;
        for (int64_t c = 0; c < g.dv; ++c) vb[t * g.dv + c] = kv(true, b, kvh, t, c);
      }
      OPFORGE_RETURN_IF_ERROR(matmulReference(tq, tkt, ts));
      if (g.softcap > 0)
        for (double& s : sb) s = g.softcap * std::tanh(s / g.softcap);
      if (want_qk && g.mode <= 1)
        for (int64_t i = 0; i < g.Sq; ++i)
          for (int64_t j = 0; j < g.T; ++j)
            storeFromDouble(qk.data, dt, g.qkAt(b, h, i, j), sb[i * g.T + j]);
      std::vector<bool> masked_row(static_cast<size_t>(g.Sq), true);
      for (int64_t i = 0; i < g.Sq; ++i)
        for (int64_t j = 0; j < g.T; ++j) {
          double m = 0;
          if (g.has_mask) {
            if (j >= g.mask_len) {
              m = -inf;
            } else {
              const double raw =
                  loadAsDouble(in[kAttnMask].data, in[kAttnMask].desc.dtype, g.maskAt(b, h, i, j));
              m = g.mask_bool ? (raw != 0 ? 0.0 : -inf) : raw;
            }
          }
          if (!g.allowed(i, j, nonpad[b])) m += -inf;
          bias[i * g.T + j] = m;
          if (!(std::isinf(m) && m < 0)) masked_row[i] = false;
          sb[i * g.T + j] += m;
        }
      if (want_qk && g.mode == 2)
        for (int64_t i = 0; i < g.Sq; ++i)
          for (int64_t j = 0; j < g.T; ++j)
            storeFromDouble(qk.data, dt, g.qkAt(b, h, i, j), sb[i * g.T + j]);
      OPFORGE_RETURN_IF_ERROR(softmaxReference(-1, ts, ts));
      for (int64_t i = 0; i < g.Sq; ++i)
        if (masked_row[i])
          for (int64_t j = 0; j < g.T; ++j) sb[i * g.T + j] = 0;
      if (want_qk && g.mode == 3)
        for (int64_t i = 0; i < g.Sq; ++i)
          for (int64_t j = 0; j < g.T; ++j)
            storeFromDouble(qk.data, dt, g.qkAt(b, h, i, j), sb[i * g.T + j]);
      OPFORGE_RETURN_IF_ERROR(matmulReference(ts, tv, to));
      if (out[0].numel() > 0)
        for (int64_t i = 0; i < g.Sq; ++i)
          for (int64_t c = 0; c < g.dv; ++c)
            storeFromDouble(out[0].data, dt, g.yAt(b, h, i, c), ob[i * g.dv + c]);
    }
  return Status::ok();
}

}  // namespace

OPFORGE_OP(Attention, "ai.onnx::Attention")
    .kind("attention")
    .doc("Scaled dot-product attention with GQA, KV cache, masks and softcap (ONNX Attention).")
    .input("Q", "[B, Hq, Sq, d] or [B, Sq, Hq * d]")
    .input("K", "[B, Hkv, Skv, d] or [B, Skv, Hkv * d]")
    .input("V", "[B, Hkv, Skv, dv] or [B, Skv, Hkv * dv]")
    .optionalInput("attn_mask", "BOOL or float, broadcast to [B, Hq, Sq, <= T]")
    .optionalInput("past_key", "[B, Hkv, past, d]")
    .optionalInput("past_value", "[B, Hkv, past, dv]")
    .optionalInput("nonpad_kv_seqlen", "INT64 [B]: valid keys per batch row")
    .output("Y", "[B, Hq, Sq, dv] or [B, Sq, Hq * dv]")
    .optionalOutput("present_key", "[B, Hkv, T, d]")
    .optionalOutput("present_value", "[B, Hkv, T, dv]")
    .optionalOutput("qk_matmul_output", "[B, Hq, Sq, T]")
    .attr<int64_t>("is_causal", int64_t{0})
    .optionalAttr<int64_t>("q_num_heads", "3-D inputs: Q's heads")
    .optionalAttr<int64_t>("kv_num_heads", "3-D inputs: K's and V's heads")
    .attr<int64_t>("qk_matmul_output_mode", int64_t{0}, "0/1: scores, 2: + bias, 3: softmax")
    .optionalAttr<double>("scale", "default 1 / sqrt(head size)")
    .attr<double>("softcap", 0.0)
    .optionalAttr<int64_t>("softmax_precision", "accepted; the reference computes in double")
    .attr<int64_t>("left_window_size", int64_t{-1})
    .attr<int64_t>("right_window_size", int64_t{-1})
    .with(onnxOutputsAttr)
    .shape(attentionShape)
    .cpu(attentionReference);

}  // namespace opforge::ops
