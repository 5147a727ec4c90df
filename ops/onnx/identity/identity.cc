// ONNX Identity: its input, written in place (the builder copies when the input is still needed).
#include <cstring>

#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Identity, "ai.onnx::Identity")
    .doc("Returns its input.")
    .combos(comboTypes(kAll))
    .valueInput("input")
    .output("output")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      if (auto v = c.value(0)) c.setValue(0, *v);
      return c.input(0).aliased();
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      if (out[0].bytes() && out[0].data != in[0].data)
        std::memmove(out[0].data, in[0].data, out[0].bytes());
      return Status::ok();
    })
    .elementwise();
}  // namespace opforge::ops
