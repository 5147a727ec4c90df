// CUDA tactic of ai.onnx::Einsum: one thread per output element sums the product of the inputs
// over every combination of the summed labels (the reference's loop; double accumulation for
// floats, 64-bit for integers). Up to 8 inputs and 16 labels.
#include "../common/cuda_common.cuh"
#include "einsum_parse.h"

namespace opforge::ops {
namespace {

constexpr int kMaxIn = 8, kMaxLabels = 16;

template <typename S>
struct EinsumArgs {
  const S* x[kMaxIn];
  int ninputs, nl, no;
  int64_t lsize[kMaxLabels];
  int64_t st[kMaxIn][kMaxLabels];
  int64_t nout, nsum;
};

template <typename S>
__global__ void __launch_bounds__(kThreads) einsumKernel(EinsumArgs<S> g, S* __restrict__ y) {
  using C = typename DNum<S>::C;
  using Acc = std::conditional_t<std::is_floating_point_v<C>, double,
                                 std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>>;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.nout; o += stride) {
    int64_t base[kMaxIn];
    for (int i = 0; i < g.ninputs; ++i) base[i] = 0;
    {
      int64_t rem = o;
      for (int j = g.no - 1; j >= 0; --j) {
        const int64_t c = rem % g.lsize[j];
        rem /= g.lsize[j];
        for (int i = 0; i < g.ninputs; ++i) base[i] += c * g.st[i][j];
      }
    }
    Acc acc = 0;
    for (int64_t s = 0; s < g.nsum; ++s) {
      int64_t off[kMaxIn];
      for (int i = 0; i < g.ninputs; ++i) off[i] = base[i];
      int64_t rem = s;
      for (int j = g.nl - 1; j >= g.no; --j) {
        const int64_t c = rem % g.lsize[j];
        rem /= g.lsize[j];
        for (int i = 0; i < g.ninputs; ++i) off[i] += c * g.st[i][j];
      }
      Acc prod = 1;
      for (int i = 0; i < g.ninputs; ++i) prod *= static_cast<Acc>(DNum<S>::load(g.x[i][off[i]]));
      acc += prod;
    }
    y[o] = DNum<S>::store(static_cast<C>(acc));
  }
}

// Labels (output first, then summed), sizes and per-input strides, as the reference.
struct Plan {
  std::vector<int64_t> lsize;
  std::vector<std::vector<int64_t>> st;
  size_t no = 0;
};

Result<Plan> planOf(const AttrMap& at, std::span<const TensorDesc> in) {
  std::vector<int> ranks;
  for (const auto& t : in) ranks.push_back(t.rank());
  OPFORGE_ASSIGN_OR_RETURN(Parsed p, parseEinsum(at.get<std::string>("equation"), ranks));
  std::map<int, int64_t> size;
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t a = 0; a < p.in[i].size(); ++a) {
      int64_t& s = size[p.in[i][a]];
      s = std::max(s, in[i].dims[a]);
    }
  std::vector<int> labels = p.out;
  for (const auto& [l, s] : size)
    if (std::find(p.out.begin(), p.out.end(), l) == p.out.end()) labels.push_back(l);
  Plan r;
  r.no = p.out.size();
  for (int l : labels) r.lsize.push_back(size[l]);
  r.st.assign(in.size(), std::vector<int64_t>(labels.size(), 0));
  for (size_t i = 0; i < in.size(); ++i) {
    const auto xs = stridesOf(in[i].dims);
    for (size_t a = 0; a < p.in[i].size(); ++a) {
      const size_t j =
          static_cast<size_t>(std::find(labels.begin(), labels.end(), p.in[i][a]) - labels.begin());
      if (in[i].dims[a] != 1 || r.lsize[j] == 1) r.st[i][j] += xs[a];
    }
  }
  return r;
}

Status einsumCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  std::vector<TensorDesc> d;
  for (const auto& t : in) d.push_back(t.desc);
  OPFORGE_ASSIGN_OR_RETURN(Plan p, planOf(k.attrs(), d));
  const Tensor& y = out[0];
  if (y.numel() == 0) return Status::ok();
  return visitDevice<kFloats | kSigned | kUnsigned>(
      y.desc.dtype, "Einsum", [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        EinsumArgs<S> g{};
        g.ninputs = static_cast<int>(in.size());
        g.nl = static_cast<int>(p.lsize.size());
        g.no = static_cast<int>(p.no);
        g.nout = g.nsum = 1;
        for (int j = 0; j < g.nl; ++j) {
          g.lsize[j] = p.lsize[j];
          (j < g.no ? g.nout : g.nsum) *= p.lsize[j];
        }
        for (int i = 0; i < g.ninputs; ++i) {
          g.x[i] = static_cast<const S*>(in[i].data);
          for (int j = 0; j < g.nl; ++j) g.st[i][j] = p.st[i][j];
        }
        if (g.nsum == 0)
          return cudaStatus(cudaMemsetAsync(y.data, 0, y.bytes(), streamOf(k)), "Einsum");
        einsumKernel<S>
            <<<blocksFor(g.nout), kThreads, 0, streamOf(k)>>>(g, static_cast<S*>(y.data));
        return launched("Einsum");
      });
}

bool einsumApplies(const AttrMap& a, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (!allLinear(in, out) || in.size() > static_cast<size_t>(kMaxIn)) return false;
  auto p = planOf(a, in);
  if (!p || p->lsize.size() > static_cast<size_t>(kMaxLabels)) return false;
  // The kernel's loop counts: the summed labels' product (and the output's) must fit int64.
  int64_t prod = 1;
  for (int64_t s : p->lsize)
    if (s < 0 || __builtin_mul_overflow(prod, s, &prod)) return false;
  return true;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Einsum",
                [](OpDef& d) { d.tactic(1, "cuda.loops", einsumCuda, einsumApplies); });

}  // namespace opforge::ops
