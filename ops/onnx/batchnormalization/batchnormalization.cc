// ONNX BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1).
// Inference (training_mode = 0): mean and var are the inputs input_mean and input_var; the node
// has the one output Y. training_mode = 1 (opset 14/15): mean and var are the batch statistics of
// each channel over N and the spatial axes (the biased variance, in double), and the optional
// outputs running_mean = input_mean * momentum + mean * (1 - momentum) and running_var =
// input_var * momentum + var * (1 - momentum) have the types of input_mean and input_var. The
// training forms of opsets before 14 (is_test = 0, the saved_mean/saved_var outputs) are not
// supported. The running outputs are empty tensors when the node does not list them.
#include "../common/util.h"

namespace opforge::ops {
namespace {
// Per channel: a = scale / sqrt(var + eps) and b = B - mean * a, so that Y = X * a + b; in
// training mode also the batch mean and variance.
struct Affine {
  std::vector<double> a, b, mean, var;
};

template <typename N>
Affine affineOf(const Tensor& x, std::span<const Tensor> in, double eps, bool training) {
  const int64_t n = x.desc.dims[0], ch = x.desc.dims[1], sp = prodOf(x.desc.dims, 2, x.desc.rank());
  const auto scale = readDoubles(in[1]), bias = readDoubles(in[2]);
  Affine f;
  f.mean = readDoubles(in[3]);
  f.var = readDoubles(in[4]);
  if (training) {
    const auto* px = ptrOf<N>(x);
    const double count = static_cast<double>(n * sp);
    for (int64_t c = 0; c < ch; ++c) {
      double sum = 0;
      for (int64_t b0 = 0; b0 < n; ++b0)
        for (int64_t i = 0; i < sp; ++i) sum += N::load(px[(b0 * ch + c) * sp + i]);
      const double mean = sum / count;
      double sq = 0;
      for (int64_t b0 = 0; b0 < n; ++b0)
        for (int64_t i = 0; i < sp; ++i) {
          const double d = N::load(px[(b0 * ch + c) * sp + i]) - mean;
          sq += d * d;
        }
      f.mean[c] = mean;
      f.var[c] = sq / count;
    }
  }
  f.a.resize(ch);
  f.b.resize(ch);
  for (int64_t c = 0; c < ch; ++c) {
    f.a[c] = scale[c] / std::sqrt(f.var[c] + eps);
    f.b[c] = bias[c] - f.mean[c] * f.a[c];
  }
  return f;
}
}  // namespace

OPFORGE_OP(BatchNormalization, "ai.onnx::BatchNormalization")
    .kind("normalization")
    .doc("Batch normalization with the given running statistics (inference).")
    .input("X")
    .input("scale")
    .input("B")
    .input("input_mean")
    .input("input_var")
    .output("Y")
    .optionalOutput("running_mean", "training_mode = 1 only; input_mean's type")
    .optionalOutput("running_var", "training_mode = 1 only; input_var's type")
    .attr<double>("epsilon", 1e-5)
    .attr<double>("momentum", 0.9, "training_mode = 1: weight of the input statistics")
    .attr<int64_t>("training_mode", int64_t{0}, "1: batch statistics (opset 14)")
    .optionalAttr<int64_t>("spatial", "opset < 9; must be 1")
    .optionalAttr<int64_t>("is_test", "opset < 7; ignored")
    .with(onnxOutputsAttr)
    .check([](const AttrMap& a) -> Status {
      const int64_t training = a.get<int64_t>("training_mode");
      if (training != 0 && training != 1)
        return Status::invalid("training_mode must be 0 or 1, got " + std::to_string(training));
      const int64_t outs = a.get<int64_t>("_onnx_num_outputs");
      if (training == 0 && outs > 1)
        return Status::unsupported(
            "the mean/variance outputs of the training forms before opset 14 are not supported "
            "(training_mode = 0, and the node lists " +
            std::to_string(outs) + " outputs)");
      if (outs > 3)
        return Status::invalid("the node lists " + std::to_string(outs) +
                               " outputs; training_mode = 1 has at most 3 (Y, running_mean, "
                               "running_var)");
      if (a.has("spatial") && a.get<int64_t>("spatial") != 1)
        return Status::unsupported("spatial = 0 is not supported");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
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
      // running_mean / running_var: [C] in training mode when listed (or through the C++ API),
      // else empty.
      const bool training = c.attr<int64_t>("training_mode") == 1;
      const int64_t asked = c.attr<int64_t>("_onnx_num_outputs");
      std::vector<SymDesc> out{x.like(), c.input(3).like(), c.input(4).like()};
      for (int i = 1; i < 3; ++i)
        if (!training || (asked > 0 && asked <= i)) out[i].dims = {0};
      return out;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const double eps = k.attr<double>("epsilon"), momentum = k.attr<double>("momentum");
      const bool training = k.attr<int64_t>("training_mode") == 1;
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1],
                    sp = prodOf(x.desc.dims, 2, x.desc.rank());
      return visitTypes<kFloats>(x.desc.dtype, "BatchNormalization", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const Affine f = affineOf<N>(x, in, eps, training);
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t c = 0; c < ch; ++c)
          for (int64_t b0 = 0; b0 < n; ++b0) {
            const int64_t base = (b0 * ch + c) * sp;
            for (int64_t i = 0; i < sp; ++i)
              py[base + i] = N::store(static_cast<C>(N::load(px[base + i]) * f.a[c] + f.b[c]));
          }
        if (training) {
          const auto mean_in = readDoubles(in[3]), var_in = readDoubles(in[4]);
          for (int64_t c = 0; c < ch && out.size() > 2; ++c) {
            if (out[1].numel() > 0)
              storeFromDouble(out[1].data, out[1].desc.dtype, c,
                              mean_in[c] * momentum + f.mean[c] * (1 - momentum));
            if (out[2].numel() > 0)
              storeFromDouble(out[2].data, out[2].desc.dtype, c,
                              var_in[c] * momentum + f.var[c] * (1 - momentum));
          }
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
