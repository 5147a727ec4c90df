// gemm_tactics.cuh — the CUDA tactics MatMul, Gemm and opforge::FusedMatMul share (kernels:
// gemm_cuda.h), as conv_tactics.cuh is Conv's and FusedConv's:
//   1-4 cuda.lt0..3  cuBLASLt, the heuristic's first four algorithms (FP32 without TF32, FP16/BF16
//                    accumulating in FP32, FP64), bias and ReLU/GELU in its epilogue;
//   5   cuda.tiled   the tiled kernel, every type the op accepts (integers accumulate in 64 bits),
//                    bias and activation in its epilogue;
//   6-9 cuda.ltN.tf32  cuBLASLt on FP32 data with the FAST_TF32 compute type (TF32 tactics: the
//                    builder takes them only when TF32 is allowed, BuilderConfig::tf32);
//   10-11 cuda.mma128, cuda.mma64  opforge's tensor-core kernel for FP16/BF16 (gemm_mma.cu) with
//                    the bias, the residual and every activation in its epilogue.
// Each op describes its node as a GemmPlan; the tactics add the pointers and run the plan's calls.
#pragma once

#include <vector>

#include "cuda_common.cuh"
#include "gemm_skinny.h"
#include "matmul_plan.h"
#include "movement.cuh"

namespace opforge::ops {

// A node as gemm_cuda.h calls: g with the pointers unset (g.bias is set by the tactics from
// bias_input), one call per entry of the offsets (elements added to A, B and Y).
struct GemmPlan {
  GemmArgs g;
  std::vector<int64_t> a_off{0}, b_off{0}, y_off{0};
  int bias_input = -1;  // the input read as the epilogue's bias vector [n], or -1
  int c_input = -1;     // the input broadcast into Y before the product (read with beta)
  // An input of Y's shape added before the activation (FusedMatMul's residual): cuBLASLt reads it
  // as C (GemmArgs::c, beta 1); the tiled kernel gets it copied into Y first.
  int residual_input = -1;
  bool zeros_if_empty = false;  // k == 0: Y = 0 (a memset); otherwise the tiled kernel's epilogue
  const char* name = "GEMM";    // the op, in error messages

  GemmPlan() = default;
  explicit GemmPlan(MatMulPlan p)
      : g(p.g), a_off(std::move(p.a_off)), b_off(std::move(p.b_off)), y_off(std::move(p.y_off)) {}
};

// `Plan` gives the GemmPlan of a node from its attributes and its inputs' and outputs' descs.
template <Result<GemmPlan> (*Plan)(const AttrMap&, std::span<const TensorDesc>,
                                   std::span<const TensorDesc>)>
struct GemmTactics {
  static Result<GemmPlan> bound(KernelContext& k, std::span<const Tensor> in,
                                std::span<const Tensor> out) {
    std::vector<TensorDesc> ind, outd;
    for (const auto& t : in) ind.push_back(t.desc);
    for (const auto& t : out) outd.push_back(t.desc);
    OPFORGE_ASSIGN_OR_RETURN(GemmPlan p, Plan(k.attrs(), ind, outd));
    p.g.bias = p.bias_input >= 0 ? in[p.bias_input].data : nullptr;
    return p;
  }

  // Y = broadcast C (read with beta by the product), when the plan has one.
  static Status broadcastC(const GemmPlan& p, std::span<const Tensor> in, const Tensor& y,
                           cudaStream_t st) {
    if (p.c_input < 0) return Status::ok();
    const Tensor& c = in[p.c_input];
    return launchStridedCopy(c.data, y.data, dtypeSize(y.desc.dtype), y.desc.dims,
                             broadcastStrides(c.desc.dims, y.desc.dims), 0, st, p.name);
  }

  // Product c of the plan: its pointers, and the residual read as C (beta 1).
  static GemmArgs productArgs(const GemmPlan& p, std::span<const Tensor> in, const Tensor& y,
                              size_t c) {
    const size_t es = dtypeSize(p.g.dtype);
    GemmArgs g = p.g;
    g.a = static_cast<const uint8_t*>(in[0].data) + p.a_off[c] * es;
    g.b = static_cast<const uint8_t*>(in[1].data) + p.b_off[c] * es;
    g.y = static_cast<uint8_t*>(y.data) + p.y_off[c] * es;
    if (p.residual_input >= 0) {
      g.c = static_cast<const uint8_t*>(in[p.residual_input].data) + p.y_off[c] * es;
      g.beta = 1.0;
    }
    return g;
  }

  template <int kAlgo, bool kTf32 = false>  // 0-3 cuBLASLt algorithm, -1 tiled
  static Status run(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    const Tensor& y = out[0];
    if (y.numel() == 0) return Status::ok();
    OPFORGE_ASSIGN_OR_RETURN(GemmPlan p, bound(k, in, out));
    p.g.tf32 = kTf32;
    cudaStream_t st = streamOf(k);
    if (p.residual_input >= 0 && (kAlgo < 0 || p.g.k == 0)) {  // Y = residual, then beta 1
      p.c_input = p.residual_input;
      p.residual_input = -1;
      p.g.beta = 1.0;
    }
    OPFORGE_RETURN_IF_ERROR(broadcastC(p, in, y, st));
    if (p.g.k == 0 && p.zeros_if_empty)  // an empty sum: zeros
      return cudaStatus(cudaMemsetAsync(y.data, 0, y.bytes(), st), p.name);
    for (size_t c = 0; c < p.a_off.size(); ++c) {
      const GemmArgs g = productArgs(p, in, y, c);
      if (kAlgo >= 0 && g.k > 0)
        OPFORGE_RETURN_IF_ERROR(gemmLt(g, kAlgo, k.workspace(), k.workspaceSize(), k.stream()));
      else  // the tiled kernel, or k == 0: beta * C + bias, no product to take
        OPFORGE_RETURN_IF_ERROR(gemmTiled(g, k.stream()));
    }
    return Status::ok();
  }

  // The tensor-core kernels (kBn 64 or 128: cuda.mma*, 0: cuda.mma_skinny): the residual read as
  // C, Y = C first for a broadcast C.
  template <int kBn>
  static Status runMma(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    const Tensor& y = out[0];
    if (y.numel() == 0) return Status::ok();
    OPFORGE_ASSIGN_OR_RETURN(GemmPlan p, bound(k, in, out));
    if (p.g.k == 0) return run<-1>(k, in, out);  // no product: the tiled kernel's epilogue
    cudaStream_t st = streamOf(k);
    OPFORGE_RETURN_IF_ERROR(broadcastC(p, in, y, st));
    for (size_t c = 0; c < p.a_off.size(); ++c) {
      const GemmArgs g = productArgs(p, in, y, c);
      OPFORGE_RETURN_IF_ERROR(kBn == 0 ? gemmSkinny(g, k.stream()) : gemmMma(g, kBn, k.stream()));
    }
    return Status::ok();
  }

  template <int kBn>
  static bool appliesMma(const AttrMap& at, std::span<const TensorDesc> in,
                         std::span<const TensorDesc> out) {
    if (!allLinear(in, out)) return false;
    auto p = Plan(at, in, out);
    if (!p) return false;
    for (const auto* offs : {&p->a_off, &p->b_off, &p->y_off})
      for (int64_t o : *offs)
        if (o % 8 != 0) return false;
    return kBn == 0 ? gemmSkinnyApplies(p->g) : gemmMmaApplies(p->g, kBn);
  }

  // Planning: the bias pointer is a placeholder (only its presence matters).
  template <int kAlgo, bool kTf32 = false>
  static bool applies(const AttrMap& at, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
    if (!allLinear(in, out)) return false;
    auto p = Plan(at, in, out);
    if (!p) return false;
    if constexpr (kTf32) {
      if (p->g.dtype != DataType::kFloat32) return false;
      p->g.tf32 = true;
    }
    if (p->bias_input >= 0) p->g.bias = reinterpret_cast<const void*>(uintptr_t{256});
    if (p->residual_input >= 0) {
      if constexpr (kAlgo >= 0) p->g.c = reinterpret_cast<const void*>(uintptr_t{512});
      p->g.beta = 1.0;
    }
    if constexpr (kAlgo >= 0)
      return p->g.k > 0 && gemmLtApplies(p->g, kAlgo);
    else
      return gemmTiledApplies(p->g);
  }

  static size_t ltWorkspace(const AttrMap&, std::span<const TensorDesc>,
                            std::span<const TensorDesc>) {
    return kLtWorkspace;
  }

  // Registers tactics 1-12.
  static void addAll(OpDef& d) {
    static_assert(kLtAlgos == 4);
    d.tactic(1, "cuda.lt0", run<0>, applies<0>, ltWorkspace);
    d.tactic(2, "cuda.lt1", run<1>, applies<1>, ltWorkspace);
    d.tactic(3, "cuda.lt2", run<2>, applies<2>, ltWorkspace);
    d.tactic(4, "cuda.lt3", run<3>, applies<3>, ltWorkspace);
    d.tactic(5, "cuda.tiled", run<-1>, applies<-1>);
    d.tf32Tactic(6, "cuda.lt0.tf32", run<0, true>, applies<0, true>, ltWorkspace);
    d.tf32Tactic(7, "cuda.lt1.tf32", run<1, true>, applies<1, true>, ltWorkspace);
    d.tf32Tactic(8, "cuda.lt2.tf32", run<2, true>, applies<2, true>, ltWorkspace);
    d.tf32Tactic(9, "cuda.lt3.tf32", run<3, true>, applies<3, true>, ltWorkspace);
    d.tactic(10, "cuda.mma128", runMma<128>, appliesMma<128>);
    d.tactic(11, "cuda.mma64", runMma<64>, appliesMma<64>);
    d.tactic(12, "cuda.mma_skinny", runMma<0>, appliesMma<0>);
  }
};

}  // namespace opforge::ops
