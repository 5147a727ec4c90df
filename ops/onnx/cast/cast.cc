// ONNX Cast: converts every element to the type `to` (an ONNX TensorProto data type number).
// Float to integer truncates toward zero and saturates at the target's range; NaN becomes 0.
// To BOOL: non-zero (and NaN) is true.
#include "../../common/dtype_dispatch.h"

namespace opforge::ops {

namespace {
template <typename NI, typename NO>
void castLoop(const Tensor& x, const Tensor& y) {
  const auto* px = static_cast<const typename NI::S*>(x.data);
  const int64_t n = x.numel();
  constexpr bool kIntToInt = std::is_integral_v<typename NI::C> && std::is_integral_v<typename NO::C> &&
                             !std::is_same_v<typename NO::C, bool>;
  if constexpr (kIntToInt) {
    // exact for 64-bit values (double would round above 2^53); wraps like C++ conversions
    auto* py = static_cast<typename NO::S*>(y.data);
    for (int64_t i = 0; i < n; ++i) py[i] = static_cast<typename NO::S>(NI::load(px[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) storeFromDouble(y.data, y.desc.dtype, i, static_cast<double>(NI::load(px[i])));
  }
}
}  // namespace

OPFORGE_OP(Cast, "ai.onnx::Cast")
    .doc("Converts the input to data type `to`.")
    .input("input")
    .output("output")
    .attr<int64_t>("to", "ONNX TensorProto data type number of the output")
    .optionalAttr<int64_t>("saturate", "float8 only; ignored")
    .check([](const AttrMap& a) -> Status {
      int64_t to = a.get<int64_t>("to");
      if (!isKnownDataType(static_cast<int32_t>(to)))
        return Status::unsupported("attribute 'to' = " + std::to_string(to) + " is not a data type opforge supports");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc y = c.input(0).like();
      y.dtype = static_cast<DataType>(c.attr<int64_t>("to"));
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return visitType(in[0].desc.dtype, kAll, "Cast", [&](auto ni) -> Status {
        return visitType(out[0].desc.dtype, kAll, "Cast", [&](auto no) -> Status {
          castLoop<decltype(ni), decltype(no)>(in[0], out[0]);
          return Status::ok();
        });
      });
    })
    .elementwise();

}  // namespace opforge::ops
