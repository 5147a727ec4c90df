// ONNX CenterCropPad (opset 18): each listed axis (`axes`, default all) becomes shape[i] long,
// centred: a longer input is cropped (the window starts at floor((in - out) / 2)), a shorter one
// is padded with zeros (the data starts at floor((out - in) / 2)). `shape` is INT32/INT64, one
// value per axis, known when the network is built (its values may be symbolic). Data movement:
// every dtype.
#include "centercroppad.h"

#include "../common/util.h"

namespace opforge::ops {
namespace {

std::vector<int> axesOf(const AttrMap& a, int rank) {
  std::vector<int> ax;
  if (a.has("axes"))
    for (int64_t v : a.get<std::vector<int64_t>>("axes")) ax.push_back(wrapAxis(v, rank));
  else
    for (int i = 0; i < rank; ++i) ax.push_back(i);
  return ax;
}

}  // namespace

OPFORGE_OP(CenterCropPad, "ai.onnx::CenterCropPad")
    .doc("Crops or zero-pads axes to a size, centred.")
    .input("input_data")
    .valueInput("shape", false, "INT32/INT64, one size per axis of `axes`")
    .output("output_data")
    .optionalAttr<std::vector<int64_t>>("axes", "the axes `shape` lists; default all, in order")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input_data'", x.dtype, kAll));
      if (!isIntIndex(c.input(1).dtype))
        return c.error("input 'shape' must be INT32 or INT64, got " + dtypeName(c.input(1).dtype));
      if (c.input(1).rank() != 1)
        return c.error("input 'shape' must be 1-D, got " + toString(c.input(1).dims));
      std::vector<int> axes;
      if (c.attrs().has("axes")) {
        OPFORGE_ASSIGN_OR_RETURN(
            axes, normAxes(c, c.attr<std::vector<int64_t>>("axes"), x.rank(), "axes"));
      } else {
        axes = axesOf(c.attrs(), x.rank());
      }
      OPFORGE_ASSIGN_OR_RETURN(auto shape, needValue(c, 1, "shape"));
      if (shape.size() != axes.size())
        return c.error("input 'shape' has " + std::to_string(shape.size()) + " values for " +
                       std::to_string(axes.size()) + " axes");
      SymDesc y = x.like();
      for (size_t i = 0; i < axes.size(); ++i) {
        if (shape[i].isConst() && shape[i].constValue() < 0)
          return c.error("input 'shape' value " + shape[i].toString() + " (axis " +
                         std::to_string(axes[i]) + ") is negative");
        y.dims[axes[i]] = shape[i];
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const int r = x.desc.rank();
      const size_t es = dtypeSize(x.desc.dtype);
      const auto xs = stridesOf(x.desc.dims);
      std::vector<int64_t> shift(r);
      for (int a = 0; a < r; ++a) shift[a] = centerShift(x.desc.dims[a], y.desc.dims[a]);
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(y.data);
      std::vector<int64_t> idx(r, 0);
      for (int64_t o = 0; o < y.numel(); ++o) {
        int64_t off = 0;
        bool inside = true;
        for (int a = 0; a < r; ++a) {
          const int64_t i = idx[a] + shift[a];
          inside = inside && i >= 0 && i < x.desc.dims[a];
          off += i * xs[a];
        }
        if (inside)
          std::memcpy(py + o * es, px + off * es, es);
        else
          std::memset(py + o * es, 0, es);
        for (int a = r - 1; a >= 0; --a) {
          if (++idx[a] < y.desc.dims[a]) break;
          idx[a] = 0;
        }
      }
      return Status::ok();
    });
}  // namespace opforge::ops
