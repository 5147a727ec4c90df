// sample::elemwise_add_plugin_ — y = x + delta written in place: the output aliases input 0
// (the plugin guide's I/O-aliasing example). Spec: README.md beside this file.
#include <cstring>

#include "../../common/dtype_dispatch.h"

namespace opforge::contrib {

OPFORGE_OP(elemwise_add_inplace, "sample::elemwise_add_plugin_")
    .doc("Adds the integer attribute delta to every element, in place.")
    .input("x")
    .output("y", "aliases x")
    .attr<int64_t>("delta", "the value added to every element")
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).aliased(); })
    .combo(Combo("FP32, FP32", "LINEAR*HWC"))
    .combo(Combo("FP32|FP16, FP32|FP16", "LINEAR"))
    .cpu([](KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& y = out[0];  // aliases x in an engine; a caller may also pass separate buffers
      if (in[0].data != y.data && y.bytes()) std::memcpy(y.data, in[0].data, y.bytes());
      const double delta = static_cast<double>(ctx.attr<int64_t>("delta"));
      return ops::visitType(
          y.desc.dtype, ops::kFloats, "elemwise_add_plugin_", [&](auto num) -> Status {
            using N = decltype(num);
            auto* p = static_cast<typename N::S*>(y.data);
            for (int64_t i = 0; i < y.numel(); ++i)
              p[i] = N::store(
                  static_cast<typename N::C>(N::load(p[i]) + static_cast<typename N::C>(delta)));
            return Status::ok();
          });
    })
    .elementwise();

}  // namespace opforge::contrib
