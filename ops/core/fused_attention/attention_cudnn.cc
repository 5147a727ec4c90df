// attention_cudnn.cc — the host half of FusedAttention's cuDNN tactics (attention_cudnn.h): one
// cuDNN frontend graph per problem (geometry, type, bias layout, scale; not the data pointers),
// built on first use and cached per thread (cuDNN binds plans to a handle) and device.
#include "attention_cudnn.h"

#if defined(OPFORGE_WITH_CUDNN_FRONTEND)

#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cuda_runtime.h>
#include <cudnn_frontend.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../onnx/common/conv_cuda.h"

namespace opforge::ops {
namespace {

namespace fe = cudnn_frontend;

enum Uid : int64_t { kQ = 1, kK, kV, kY, kBias, kStats };

constexpr size_t kMaxProblems = 256;

// The bias as cuDNN takes it: [Bb, Hb, Sq, Sk] with Bb in {1, B} and Hb in {1, H}, each with one
// stride; false when opforge's bias view (a mixed-radix walk over Q's leading axes) is not that.
struct BiasLayout {
  int64_t b = 1, h = 1, sb = 0, sh = 0;
};
bool biasLayout(const AttnGeom& g, BiasLayout* out) {
  if (g.B * g.H > (int64_t{1} << 20)) return false;
  const auto at = [&](int64_t b, int64_t h) { return attnBiasRow(g.bias, b * g.H + h); };
  const int64_t sb = g.B > 1 ? at(1, 0) : 0, sh = g.H > 1 ? at(0, 1) : 0;
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t h = 0; h < g.H; ++h)
      if (at(b, h) != b * sb + h * sh) return false;
  out->b = sb != 0 ? g.B : 1, out->sb = sb != 0 ? sb : g.sq * g.sk;
  out->h = sh != 0 ? g.H : 1, out->sh = sh != 0 ? sh : g.sq * g.sk;
  return true;
}

// A view's strides for cuDNN's [B, H, S, t] order; an axis of one element gets a harmless nonzero
// stride (cuDNN rejects a zero one).
std::vector<int64_t> stridesOf(const AttnView& w, int64_t B, int64_t H, int64_t S, int64_t t) {
  const int64_t span = S * (w.ss ? w.ss : t) + t;
  return {w.sb ? w.sb : span * H, w.sh ? w.sh : span, w.ss ? w.ss : t, w.st};
}

// A bias broadcast over the query rows (row stride 0, a [B, 1, 1, Sk] padding mask) is left to
// the other tactics: cuDNN read it wrong on an H100 (the GPU case "padding mask [B, 1, 1, Sk]").
bool shapeOk(const AttnGeom& g, DataType t) {
  return (t == DataType::kFloat16 || t == DataType::kBFloat16) && g.d % 8 == 0 && g.dv % 8 == 0 &&
         g.d <= 128 && g.dv <= 128 && g.q.st == 1 && g.k.st == 1 && g.v.st == 1 && g.y.st == 1 &&
         g.sq >= 1 && g.sk >= 1 && g.B >= 1 && g.H >= 1 &&
         (!g.has_bias || (g.bias.sk == 1 && (g.bias.ss != 0 || g.sq == 1)));
}

struct Problem {
  std::shared_ptr<fe::graph::Graph> graph;
  std::vector<int64_t> plans;  // the candidates' plan indices that built, in cuDNN's order
  std::vector<int64_t> workspace;
};

std::string keyOf(const AttnGeom& g, DataType t, int dev) {
  std::string k = std::to_string(dev) + "|" + std::to_string(static_cast<int>(t));
  for (int64_t v : {g.B, g.H, g.sq, g.sk, g.d, g.dv}) k += "|" + std::to_string(v);
  for (const AttnView* w : {&g.q, &g.k, &g.v, &g.y})
    for (int64_t v : {w->off % 8, w->sb, w->sh, w->ss, w->st}) k += "," + std::to_string(v);
  uint64_t scale_bits = 0;
  std::memcpy(&scale_bits, &g.scale, sizeof scale_bits);
  k += "|" + std::to_string(scale_bits);
  if (g.has_bias) {
    BiasLayout bl;
    if (biasLayout(g, &bl))
      for (int64_t v : {bl.b, bl.h, bl.sb, bl.sh, g.bias.ss, g.bias.sk})
        k += "b" + std::to_string(v);
  }
  return k;
}

std::unique_ptr<Problem> build(const AttnGeom& g, DataType t, cudnnHandle_t h) {
  auto p = std::make_unique<Problem>();
  BiasLayout bl;
  if (g.has_bias && !biasLayout(g, &bl)) return p;
  auto gr = std::make_shared<fe::graph::Graph>();
  gr->set_io_data_type(t == DataType::kFloat16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  using TA = fe::graph::Tensor_attributes;
  auto Q = gr->tensor(TA().set_name("Q")
                          .set_uid(kQ)
                          .set_dim({g.B, g.H, g.sq, g.d})
                          .set_stride(stridesOf(g.q, g.B, g.H, g.sq, g.d)));
  auto K = gr->tensor(TA().set_name("K")
                          .set_uid(kK)
                          .set_dim({g.B, g.H, g.sk, g.d})
                          .set_stride(stridesOf(g.k, g.B, g.H, g.sk, g.d)));
  auto V = gr->tensor(TA().set_name("V")
                          .set_uid(kV)
                          .set_dim({g.B, g.H, g.sk, g.dv})
                          .set_stride(stridesOf(g.v, g.B, g.H, g.sk, g.dv)));
  auto attrs = fe::graph::SDPA_attributes()
                   .set_name("attention")
                   .set_generate_stats(true)
                   .set_attn_scale(static_cast<float>(g.scale));
  if (g.has_bias) {
    auto bias = gr->tensor(TA().set_name("bias")
                               .set_uid(kBias)
                               .set_dim({bl.b, bl.h, g.sq, g.sk})
                               .set_stride({bl.sb, bl.sh, g.bias.ss, g.bias.sk}));
    attrs.set_bias(bias);
  }
  auto [Y, stats] = gr->sdpa(Q, K, V, attrs);
  Y->set_output(true)
      .set_uid(kY)
      .set_dim({g.B, g.H, g.sq, g.dv})
      .set_stride(stridesOf(g.y, g.B, g.H, g.sq, g.dv));
  stats->set_output(true)
      .set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({g.B, g.H, g.sq, 1})
      .set_stride({g.H * g.sq, g.sq, 1, 1});
  if (gr->validate().is_bad() || gr->build_operation_graph(h).is_bad() ||
      gr->create_execution_plans({fe::HeurMode_t::A}).is_bad() || gr->check_support(h).is_bad())
    return p;
  const int64_t n = gr->get_execution_plan_count();
  for (int64_t i = 0; i < n && static_cast<int>(p->plans.size()) < kCudnnAttnRanks; ++i) {
    int64_t ws = 0;
    if (gr->build_plan_at_index(h, i).is_bad() ||
        gr->get_workspace_size_plan_at_index(i, ws).is_bad())
      continue;
    p->plans.push_back(i);
    p->workspace.push_back(ws);
  }
  p->graph = std::move(gr);
  return p;
}

Result<const Problem*> problemOf(const AttnGeom& g, DataType t, cudnnHandle_t h) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return Status::runtime("cudaGetDevice failed");
  thread_local std::map<std::string, std::unique_ptr<Problem>> cache;
  const std::string key = keyOf(g, t, dev);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  if (cache.size() >= kMaxProblems) cache.clear();  // no caller holds an entry between calls
  // Building plans may allocate; allow it even while this thread captures a CUDA graph.
  cudaStreamCaptureMode cm = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&cm);
  auto p = build(g, t, h);
  (void)cudaThreadExchangeStreamCaptureMode(&cm);
  const Problem* r = p.get();
  cache.emplace(key, std::move(p));
  return r;
}

}  // namespace

bool cudnnAttnApplies(const AttnGeom& g, DataType t, int rank, size_t* workspace) {
  if (rank < 0 || rank >= kCudnnAttnRanks || !shapeOk(g, t)) return false;
  auto h = cudnnHandleFor(nullptr);
  if (!h) return false;
  auto p = problemOf(g, t, static_cast<cudnnHandle_t>(*h));
  if (!p || rank >= static_cast<int>((*p)->plans.size())) return false;
  if (workspace) *workspace = static_cast<size_t>((*p)->workspace[rank]);
  return true;
}

Status cudnnAttnRun(const AttnGeom& g, DataType t, int rank, const void* q, const void* k,
                    const void* v, const void* bias, void* y, float* stats, void* workspace,
                    size_t workspace_size, void* stream) {
  if (!shapeOk(g, t)) return Status::unsupported("cuDNN attention: data type or geometry");
  OPFORGE_ASSIGN_OR_RETURN(void* hv, cudnnHandleFor(stream));
  auto h = static_cast<cudnnHandle_t>(hv);
  OPFORGE_ASSIGN_OR_RETURN(const Problem* p, problemOf(g, t, h));
  if (rank < 0 || rank >= static_cast<int>(p->plans.size()))
    return Status::unsupported("cuDNN attention: engine " + std::to_string(rank) + " of " +
                               std::to_string(p->plans.size()) + " for this problem");
  if (static_cast<size_t>(p->workspace[rank]) > workspace_size)
    return Status::runtime("cuDNN attention: workspace of " + std::to_string(workspace_size) +
                           " bytes, the engine needs " + std::to_string(p->workspace[rank]));
  const size_t es = 2;
  const auto at = [&](const void* base, const AttnView& w) {
    return const_cast<char*>(static_cast<const char*>(base)) + w.off * es;
  };
  std::unordered_map<int64_t, void*> pack = {
      {kQ, at(q, g.q)}, {kK, at(k, g.k)}, {kV, at(v, g.v)}, {kY, at(y, g.y)}, {kStats, stats}};
  if (g.has_bias) pack[kBias] = const_cast<void*>(bias);
  for (const auto& [uid, ptr] : pack)
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
      return Status::unsupported("cuDNN attention needs 16-byte aligned tensors");
  auto e = p->graph->execute_plan_at_index(h, pack, workspace, p->plans[rank]);
  if (e.is_bad()) return Status::runtime("cuDNN attention: " + e.get_message());
  return Status::ok();
}

}  // namespace opforge::ops

#endif  // OPFORGE_WITH_CUDNN_FRONTEND
