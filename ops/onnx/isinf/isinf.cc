// ONNX IsInf: BOOL map of the infinite elements (positive and/or negative) of a float tensor.
#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(IsInf, "ai.onnx::IsInf")
    .doc("Elementwise test for +inf / -inf.")
    .combos(comboTypes(kFloats) + ", BOOL")
    .input("X")
    .output("Y")
    .attr<int64_t>("detect_negative", int64_t{1})
    .attr<int64_t>("detect_positive", int64_t{1})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      return SymDesc::make(DataType::kBool, x.dims);
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool neg = k.attr<int64_t>("detect_negative") != 0,
                 pos = k.attr<int64_t>("detect_positive") != 0;
      return visitTypes<kFloats>(in[0].desc.dtype, "IsInf", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* px = ptrOf<N>(in[0]);
        auto* py = static_cast<uint8_t*>(out[0].data);
        for (int64_t i = 0; i < in[0].numel(); ++i) {
          const auto v = N::load(px[i]);
          py[i] = std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)) ? 1 : 0;
        }
        return Status::ok();
      });
    })
    .elementwise();
}  // namespace opforge::ops
