// CUDA tactic of ai.onnx::Constant (a layer only when constant folding is off): the attribute's
// bytes travel as kernel parameters, 4 KiB per launch, so the layer captures into CUDA graphs
// without host memory.
#include "../common/cuda_common.cuh"

namespace opforge::ops {

Result<TensorValue> constantOf(const AttrMap& a);  // constant.cc

namespace {
constexpr int kChunk = 4096;
struct Chunk {
  uint8_t b[kChunk];
};
__global__ void writeBytesKernel(uint8_t* y, Chunk c, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = c.b[i];
}

Status constantCuda(KernelContext& k, std::span<const Tensor>, std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(TensorValue t, constantOf(k.attrs()));
  if (t.data.size() != out[0].bytes()) return Status::internal("Constant: output size mismatch");
  auto* y = static_cast<uint8_t*>(out[0].data);
  for (size_t first = 0; first < t.data.size(); first += kChunk) {
    Chunk c;
    const int n = static_cast<int>(std::min<size_t>(kChunk, t.data.size() - first));
    std::memcpy(c.b, t.data.data() + first, static_cast<size_t>(n));
    writeBytesKernel<<<1, 256, 0, streamOf(k)>>>(y + first, c, n);
    OPFORGE_RETURN_IF_ERROR(launched("Constant"));
  }
  return Status::ok();
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Constant", [](OpDef& d) {
  d.tactic(1, "cuda.write", constantCuda,
           [](const AttrMap& a, std::span<const TensorDesc>, std::span<const TensorDesc> out) {
             return out[0].bytes() <=
                    (size_t{1} << 20);  // larger constants stay with the reference
           });
});

}  // namespace opforge::ops
