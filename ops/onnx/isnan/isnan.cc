// ONNX IsNaN: BOOL map of the NaN elements of a float tensor.
#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(IsNaN, "ai.onnx::IsNaN")
    .doc("Elementwise x != x.")
    .combos(comboTypes(kFloats) + ", BOOL")
    .input("X")
    .output("Y")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      return SymDesc::make(DataType::kBool, x.dims);
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return visitTypes<kFloats>(in[0].desc.dtype, "IsNaN", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* px = ptrOf<N>(in[0]);
        auto* py = static_cast<uint8_t*>(out[0].data);
        for (int64_t i = 0; i < in[0].numel(); ++i) py[i] = std::isnan(N::load(px[i])) ? 1 : 0;
        return Status::ok();
      });
    })
    .elementwise();
}  // namespace opforge::ops
