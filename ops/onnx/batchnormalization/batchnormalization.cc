// ONNX BatchNormalization, inference form: Y = (X - mean) / sqrt(var + epsilon) * scale + B per
// channel (axis 1). training_mode = 1 (batch statistics, running-mean outputs) is not supported.
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(BatchNormalization, "ai.onnx::BatchNormalization")
    .doc("Batch normalization with the given running statistics (inference).")
    .input("X")
    .input("scale")
    .input("B")
    .input("input_mean")
    .input("input_var")
    .output("Y")
    .attr<double>("epsilon", 1e-5)
    .attr<double>("momentum", 0.9, "training only")
    .attr<int64_t>("training_mode", int64_t{0}, "must be 0: opforge implements inference")
    .optionalAttr<int64_t>("spatial", "opset < 9; must be 1")
    .optionalAttr<int64_t>("is_test", "opset < 7; ignored")
    .with(onnxOutputsAttr)
    .check([](const AttrMap& a) -> Status {
      if (a.get<int64_t>("training_mode") != 0)
        return Status::unsupported(
            "training_mode = 1 is not supported (opforge implements BatchNormalization for "
            "inference)");
      if (a.get<int64_t>("_onnx_num_outputs") > 1)
        return Status::unsupported(
            "the running mean/variance outputs (training) are not supported; the node lists " +
            std::to_string(a.get<int64_t>("_onnx_num_outputs")) + " outputs");
      if (a.has("spatial") && a.get<int64_t>("spatial") != 1)
        return Status::unsupported("spatial = 0 is not supported");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (x.rank() < 2)
        return c.error("input 'X' must have rank >= 2 (N, C, ...), got " + toString(x.dims));
      static const char* kNames[] = {"", "scale", "B", "input_mean", "input_var"};
      for (int i = 1; i <= 4; ++i) {
        SymDesc p = c.input(i);
        if (!isFloatType(p.dtype))
          return c.error(std::string("input '") + kNames[i] + "' must be a float tensor");
        if (p.rank() != 1)
          return c.error(std::string("input '") + kNames[i] + "' must be 1-D [C], got " +
                         toString(p.dims));
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, p.dim(0), x.dim(1),
                      std::string("input '") + kNames[i] + "' must have C = dim 1 of X elements"));
      }
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const double eps = k.attr<double>("epsilon");
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1],
                    sp = prodOf(x.desc.dims, 2, x.desc.rank());
      const auto scale = readDoubles(in[1]), bias = readDoubles(in[2]), mean = readDoubles(in[3]),
                 var = readDoubles(in[4]);
      return visitTypes<kFloats>(x.desc.dtype, "BatchNormalization", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t c = 0; c < ch; ++c) {
          const double a = scale[c] / std::sqrt(var[c] + eps), b = bias[c] - mean[c] * a;
          for (int64_t b0 = 0; b0 < n; ++b0) {
            const int64_t base = (b0 * ch + c) * sp;
            for (int64_t i = 0; i < sp; ++i)
              py[base + i] = N::store(static_cast<C>(N::load(px[base + i]) * a + b));
          }
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
