// ONNX Upsample (opset 7 and 9; deprecated since 10 in favour of Resize): nearest or linear
// upsampling by `scales` (>= 1, one per axis; opset 7 an attribute, opset 9 an input known when
// the network is built). Output dims floor(in * scale). It is an opset-10 Resize (asymmetric
// coordinates x = o / scale, nearest rounds down, linear blends floor(x) and floor(x) + 1, the
// edge repeated), so the reference and the CUDA tactics are Resize's (resize/resize.h), run with
// those attributes.
#include "upsample.h"

#include <cmath>

#include "../common/util.h"
#include "../resize/resize.h"

namespace opforge::ops {

AttrMap upsampleResizeAttrs(const AttrMap& a) {
  AttrMap r;
  r.set("mode", a.get<std::string>("mode"));
  r.set("coordinate_transformation_mode", std::string("asymmetric"));
  r.set("nearest_mode", std::string("floor"));
  r.set("cubic_coeff_a", -0.75);
  r.set("exclude_outside", int64_t{0});
  r.set("extrapolation_value", 0.0);
  r.set("antialias", int64_t{0});
  r.set("keep_aspect_ratio_policy", std::string("stretch"));
  r.set("_onnx_opset", int64_t{10});
  return r;
}

std::vector<float> upsampleAttrScales(const AttrMap& a) {
  return a.has("scales") ? a.get<std::vector<float>>("scales") : std::vector<float>{};
}

OPFORGE_OP(Upsample, "ai.onnx::Upsample")
    .doc("Upsamples by nearest or linear interpolation (an opset-10 Resize).")
    .input("X")
    .valueInput("scales", true, "opset 9: FP32 [rank], each >= 1, known when the network is built")
    .output("Y")
    .attr<std::string>("mode", std::string("nearest"), "nearest | linear")
    .optionalAttr<std::vector<float>>("scales", "opset 7: the scales, one per axis, each >= 1")
    .check([](const AttrMap& a) -> Status {
      const auto m = a.get<std::string>("mode");
      if (m != "nearest" && m != "linear")
        return Status::invalid("attribute 'mode' must be nearest or linear, got '" + m + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats | kSigned | kUnsigned));
      std::vector<double> scales;
      const auto attr = upsampleAttrScales(c.attrs());
      if (c.attrs().has("scales")) {
        if (c.hasInput(1)) return c.error("'scales' is given both as an attribute and as an input");
        scales.assign(attr.begin(), attr.end());
      } else {
        if (!c.hasInput(1))
          return c.error("'scales' is missing (an attribute in opset 7, an input from opset 9)");
        if (c.input(1).dtype != DataType::kFloat32)
          return c.error("input 'scales' must be FP32, got " + dtypeName(c.input(1).dtype));
        OPFORGE_ASSIGN_OR_RETURN(scales, needNumbers(c, 1, "scales"));
      }
      if (static_cast<int>(scales.size()) != x.rank())
        return c.error("'scales' has " + std::to_string(scales.size()) +
                       " values for an input of rank " + std::to_string(x.rank()));
      SymDesc y = x.like();
      for (int a = 0; a < x.rank(); ++a) {
        if (!(scales[a] >= 1) || !std::isfinite(scales[a]))
          return c.error("'scales' value " + std::to_string(scales[a]) + " (axis " +
                         std::to_string(a) + ") must be a finite number >= 1");
        auto d = resizeScaledDim(x.dim(a), scales[a]);
        if (!d) return c.error(d.status().message() + " (axis " + std::to_string(a) + ")");
        y.dims[a] = *d;
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
      const AttrMap ra = upsampleResizeAttrs(k.attrs());
      const auto attr = upsampleAttrScales(k.attrs());
      if (attr.empty()) return resizeReference(ra, in, out);
      std::vector<float> s = attr;
      const Tensor scales{TensorDesc{DataType::kFloat32, {static_cast<int64_t>(s.size())}},
                          s.data(), Device::kCpu};
      const Tensor ins[2] = {in[0], scales};
      return resizeReference(ra, ins, out);
    });

}  // namespace opforge::ops
