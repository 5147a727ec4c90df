// CUDA tactic of ai.onnx::ConstantOfShape: a fill with the attribute's one value (default FP32 0);
// the shape comes from the planned output.
#include "../common/movement.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ConstantOfShape", [](OpDef& d) {
  d.tactic(
      1, "cuda.fill",
      [](KernelContext& k, std::span<const Tensor>, std::span<const Tensor> out) -> Status {
        uint8_t value[8] = {0};
        if (k.attrs().has("value")) {
          const auto t = k.attr<TensorValue>("value");
          if (t.data.size() != dtypeSize(out[0].desc.dtype) || t.data.size() > 8)
            return Status::internal("ConstantOfShape: the value does not match the output type");
          std::memcpy(value, t.data.data(), t.data.size());
        }
        return launchFill(out[0].data, out[0].numel(), dtypeSize(out[0].desc.dtype), value,
                          streamOf(k), "ConstantOfShape");
      });
});

}  // namespace opforge::ops
