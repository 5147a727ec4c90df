// opforge::Roll — torch.roll: a circular shift of a tensor along one or more axes. What
// roll_fusion makes of an exported roll (two Slices and a Concat per axis). Spec: README.md.
#include <cstring>

#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"
#include "roll.h"

namespace opforge::ops {

Result<std::vector<int64_t>> rollShifts(const AttrMap& a, const std::vector<int64_t>& dims) {
  const auto shifts = a.get<std::vector<int64_t>>("shifts");
  const auto axes = a.get<std::vector<int64_t>>("axes");
  const int r = static_cast<int>(dims.size());
  if (shifts.size() != axes.size())
    return Status::invalid("attribute 'shifts' has " + std::to_string(shifts.size()) +
                           " values and 'axes' " + std::to_string(axes.size()) +
                           "; one shift per axis is expected");
  std::vector<int64_t> per_axis(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < -r || axes[i] >= r)
      return Status::invalid("attribute 'axes' has " + std::to_string(axes[i]) +
                             ", out of range for rank " + std::to_string(r));
    const int ax = wrapAxis(axes[i], r);
    if (dims[ax] == 0) continue;
    // Each shift is reduced first: the sum of reduced shifts cannot overflow.
    int64_t s = shifts[i] % dims[ax];
    if (s < 0) s += dims[ax];
    per_axis[ax] = (per_axis[ax] + s) % dims[ax];
  }
  return per_axis;
}

OPFORGE_OP(Roll, "opforge::Roll")
    .kind("movement")
    .doc("Circular shift along axes (torch.roll): y[.., i, ..] = x[.., (i - shift) mod d, ..].")
    .combos(comboTypes(kAll))
    .input("data")
    .output("rolled")
    .attr<std::vector<int64_t>>("shifts", {}, "shift per entry of 'axes' (any sign, any size)")
    .attr<std::vector<int64_t>>("axes", {}, "axes rolled (negative counts from the end)")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      const auto shifts = c.attr<std::vector<int64_t>>("shifts");
      const auto axes = c.attr<std::vector<int64_t>>("axes");
      if (shifts.size() != axes.size())
        return c.error("attribute 'shifts' has " + std::to_string(shifts.size()) +
                       " values and 'axes' " + std::to_string(axes.size()) +
                       "; one shift per axis is expected");
      for (int64_t a : axes)
        if (auto ax = normAxis(c, a, x.rank(), "axes value"); !ax) return ax.status();
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      if (y.desc.dtype != x.desc.dtype || y.desc.dims != x.desc.dims)
        return Status::invalid("output " + describe(y.desc) + " differs from data " +
                               describe(x.desc));
      OPFORGE_ASSIGN_OR_RETURN(auto shift, rollShifts(k.attrs(), x.desc.dims));
      if (y.numel() == 0) return Status::ok();
      const int r = x.desc.rank();
      int last = -1;  // the last rolled axis; what follows it moves as one block
      for (int a = 0; a < r; ++a)
        if (shift[a] != 0) last = a;
      const size_t es = dtypeSize(x.desc.dtype);
      if (last < 0) {
        if (x.data != y.data) std::memcpy(y.data, x.data, x.bytes());
        return Status::ok();
      }
      int64_t block = 1;
      for (int a = last + 1; a < r; ++a) block *= x.desc.dims[a];
      const size_t bytes = static_cast<size_t>(block) * es;
      const auto xs = stridesOf(x.desc.dims);
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(y.data);
      std::vector<int64_t> idx(last + 1, 0);
      const int64_t rows = y.numel() / block;
      for (int64_t row = 0; row < rows; ++row) {
        int64_t src = 0;
        for (int a = 0; a <= last; ++a) {
          int64_t s = idx[a] - shift[a];
          if (s < 0) s += x.desc.dims[a];
          src += s * xs[a];
        }
        std::memcpy(py + row * bytes, px + src * static_cast<int64_t>(es), bytes);
        for (int a = last; a >= 0; --a) {
          if (++idx[a] < x.desc.dims[a]) break;
          idx[a] = 0;
        }
      }
      return Status::ok();
    });

}  // namespace opforge::ops
