// CUDA tactics of ai.onnx::Upsample: Resize's tactics (resize/resize.h) run with the attributes of
// an opset-10 Resize (upsample.h): 1 cuda.taps, 2 cuda.rows. Opset 7's scales (an attribute) are
// written into the workspace by a one-thread kernel, after Resize's own workspace, so the tactic
// reads them on the device as it reads opset 9's `scales` input.
#include "upsample.h"

#include "../common/cuda_common.cuh"
#include "../resize/resize.h"

namespace opforge::ops {
namespace {

// The node's kernel context with Resize's attributes.
class ResizeContext final : public KernelContext {
 public:
  ResizeContext(KernelContext& k, AttrMap attrs) : k_(k), attrs_(std::move(attrs)) {}
  const AttrMap& attrs() const override { return attrs_; }
  int32_t tactic() const override { return k_.tactic(); }
  void* stream() const override { return k_.stream(); }
  void* workspace() const override { return k_.workspace(); }
  size_t workspaceSize() const override { return k_.workspaceSize(); }
  DeviceErrorRecord* errorRecord() const override { return k_.errorRecord(); }

 private:
  KernelContext& k_;
  AttrMap attrs_;
};

constexpr int kMaxScales = kMaxDims;
struct Scales {
  int n;
  float v[kMaxScales];
};
__global__ void scalesKernel(Scales s, float* dst) {
  for (int i = 0; i < s.n; ++i) dst[i] = s.v[i];
}

size_t up(size_t v) {
  return (v + 255) / 256 * 256;
}

template <bool kRows>
Status upsampleCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  ResizeContext rc(k, upsampleResizeAttrs(k.attrs()));
  const auto attr = upsampleAttrScales(k.attrs());
  if (attr.empty()) return kRows ? resizeCudaRows(rc, in, out) : resizeCudaTaps(rc, in, out);
  if (attr.size() > static_cast<size_t>(kMaxScales))
    return Status::unsupported("Upsample (CUDA): more than 10 scales");
  Scales s{static_cast<int>(attr.size()), {}};
  for (size_t i = 0; i < attr.size(); ++i) s.v[i] = attr[i];
  const TensorDesc x[1] = {in[0].desc};
  const TensorDesc y[1] = {out[0].desc};
  auto* dst = reinterpret_cast<float*>(static_cast<uint8_t*>(k.workspace()) +
                                       up(resizeCudaWorkspace(rc.attrs(), x, y)));
  scalesKernel<<<1, 1, 0, streamOf(k)>>>(s, dst);
  OPFORGE_RETURN_IF_ERROR(launched("Upsample"));
  const Tensor ins[2] = {in[0], Tensor{TensorDesc{DataType::kFloat32, {s.n}}, dst, Device::kCuda}};
  return kRows ? resizeCudaRows(rc, ins, out) : resizeCudaTaps(rc, ins, out);
}

template <bool kRows>
bool upsampleApplies(const AttrMap& a, std::span<const TensorDesc> in,
                     std::span<const TensorDesc> out) {
  const AttrMap ra = upsampleResizeAttrs(a);
  return kRows ? resizeCudaRowsApplies(ra, in, out) : resizeCudaApplies(ra, in, out);
}

size_t upsampleWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                         std::span<const TensorDesc> out) {
  return up(resizeCudaWorkspace(upsampleResizeAttrs(a), in, out)) + kMaxScales * sizeof(float);
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Upsample", [](OpDef& d) {
  d.tactic(1, "cuda.taps", upsampleCuda<false>, upsampleApplies<false>, upsampleWorkspace);
  d.tactic(2, "cuda.rows", upsampleCuda<true>, upsampleApplies<true>, upsampleWorkspace);
});

}  // namespace opforge::ops
