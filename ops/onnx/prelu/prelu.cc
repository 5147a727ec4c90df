// ONNX PRelu: x for x >= 0, slope * x otherwise; slope broadcasts to x.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(PRelu, "ai.onnx::PRelu")
    .doc("Elementwise x < 0 ? slope * x : x, slope broadcast to x.")
    .with([](OpDef& d) {
      defineBinary<kFloats | kSigned>(d, "PRelu", [](auto x, auto s) {
        using C = decltype(x);
        return x < C(0) ? static_cast<C>(s * x) : x;
      });
    });
}  // namespace opforge::ops
