// ONNX Slice: data[starts:ends:steps] on `axes` (numpy rules: negative values count from the end,
// out-of-range values clamp). starts/ends/axes/steps are inputs since opset 10 and must be known
// when the network is built; starts and ends may be symbolic (computed from shapes) when the step
// is positive. Shape values pass through a 1-D slice.
#include <algorithm>

#include "../common/combos.h"
#include "../common/runtime_values.h"
#include "../common/util.h"

namespace opforge::ops {
namespace {

struct SliceParams {
  std::vector<int64_t> start, step;  // per input axis (step 1 and start 0 on untouched axes)
};

// Clamped start and output length of one axis of size d. No intermediate overflows for any
// int64 start, end or step (steps of INT64_MIN, ends near INT64_MAX).
void clampAxis(int64_t d, int64_t s, int64_t e, int64_t st, int64_t* start, int64_t* len) {
  if (s < 0) s += d;  // s < 0 <= d: no overflow
  if (e < 0) e += d;
  if (st > 0) {
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    *len = e > s ? (e - s - 1) / st + 1 : 0;
  } else {
    s = std::clamp<int64_t>(s, 0, d - 1);
    e = std::clamp<int64_t>(e, -1, d - 1);
    const uint64_t down = 0 - static_cast<uint64_t>(st);  // |st|, also for INT64_MIN
    *len = s > e ? static_cast<int64_t>(static_cast<uint64_t>(s - e - 1) / down) + 1 : 0;
  }
  *start = s;
}

// The step an axis of `len` output elements advances by: any step gives the same single element,
// so 1 there keeps the stride arithmetic (step * stride) in range.
int64_t usedStep(int64_t len, int64_t st) {
  return len <= 1 ? 1 : st;
}

// Symbolic clamp of a start/end value v to [0, d] for a positive step. A run-time value, of
// either sign, counts from the end when negative: min(d, max(0, v + d * [v < 0])).
DimExpr clampSym(const DimExpr& v, const DimExpr& d) {
  if (v.isConst() && v.constValue() < 0) return max(d + v, 0);
  if (!readAtRunTime(v)) return min(v, d);
  return min(d, max(v + d * isNegative(v), 0));
}

}  // namespace

OPFORGE_OP(Slice, "ai.onnx::Slice")
    .kind("movement")
    .doc("Strided slice along some axes.")
    .combos(comboTypes(kAll) + ", " + kIndexTypes + ", " + kIndexTypes + ", " + kIndexTypes + ", " +
            kIndexTypes + ", " + comboTypes(kAll))
    .valueInput("data")
    .valueInput("starts", true)
    .valueInput("ends", true)
    .valueInput("axes", true)
    .valueInput("steps", true)
    .output("output")
    .optionalAttr<std::vector<int64_t>>("starts", "opset < 10")
    .optionalAttr<std::vector<int64_t>>("ends", "opset < 10")
    .optionalAttr<std::vector<int64_t>>("axes", "opset < 10")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      const int r = x.rank();
      std::vector<DimExpr> starts, ends;
      std::vector<int64_t> axes, steps;
      if (c.hasInput(1)) {
        if (!c.hasInput(2)) return c.error("input 'ends' is required with 'starts'");
        for (int i = 1; i <= 4; ++i)
          if (c.hasInput(i) && !isIntIndex(c.input(i).dtype))
            return c.error("starts, ends, axes and steps must be INT32 or INT64, got " +
                           dtypeName(c.input(i).dtype));
        OPFORGE_ASSIGN_OR_RETURN(starts, needValue(c, 1, "starts"));
        OPFORGE_ASSIGN_OR_RETURN(ends, needValue(c, 2, "ends"));
        if (c.hasInput(3)) {
          OPFORGE_ASSIGN_OR_RETURN(axes, needInts(c, 3, "axes"));
        }
        if (c.hasInput(4)) {
          OPFORGE_ASSIGN_OR_RETURN(steps, needInts(c, 4, "steps"));
        }
      } else {
        if (!c.attrs().has("starts") || !c.attrs().has("ends"))
          return c.error("needs starts and ends");
        for (int64_t v : c.attr<std::vector<int64_t>>("starts")) starts.emplace_back(v);
        for (int64_t v : c.attr<std::vector<int64_t>>("ends")) ends.emplace_back(v);
        if (c.attrs().has("axes")) axes = c.attr<std::vector<int64_t>>("axes");
      }
      const size_t n = starts.size();
      if (axes.empty())
        for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
      if (steps.empty()) steps.assign(n, 1);
      if (ends.size() != n || axes.size() != n || steps.size() != n)
        return c.error("starts, ends, axes and steps must have one length, got " +
                       std::to_string(n) + ", " + std::to_string(ends.size()) + ", " +
                       std::to_string(axes.size()) + ", " + std::to_string(steps.size()));
      OPFORGE_ASSIGN_OR_RETURN(auto ax, normAxes(c, axes, r));
      SymDesc y = x.like();
      std::vector<int64_t> cstart(r, 0), cstep(r, 1);
      bool all_const = true;
      for (size_t i = 0; i < n; ++i) {
        const int a = ax[i];
        if (steps[i] == 0) return c.error("steps must not be 0 (axis " + std::to_string(a) + ")");
        const DimExpr d = x.dim(a);
        if (d.isConst() && starts[i].isConst() && ends[i].isConst()) {
          int64_t s, len;
          clampAxis(d.constValue(), starts[i].constValue(), ends[i].constValue(), steps[i], &s,
                    &len);
          y.dims[a] = len;
          cstart[a] = s;
          cstep[a] = usedStep(len, steps[i]);
          continue;
        }
        all_const = false;
        if (steps[i] < 0)
          return c.error(
              "a negative step needs a static dimension and constant starts/ends (axis " +
              std::to_string(a) + ")");
        const DimExpr s = clampSym(starts[i], d), e = clampSym(ends[i], d);
        y.dims[a] = ceilDiv(max(e - s, 0), steps[i]);
      }
      // Shape values: a slice of known values (1-D, or a small tensor of static dims: the
      // TorchScript export of F.pad reverses its [-1, 2] pads with a step of -1).
      if (all_const &&
          std::all_of(x.dims.begin(), x.dims.end(), [](const DimExpr& d) { return d.isConst(); })) {
        std::vector<int64_t> xd, yd;
        for (int a = 0; a < r; ++a) xd.push_back(x.dim(a).constValue());
        for (int a = 0; a < r; ++a) yd.push_back(y.dims[a].constValue());
        const int64_t count = product(y.dims).constValue();
        auto v = c.value(0);
        if (v && static_cast<int64_t>(v->size()) == product(x.dims).constValue() &&
            (r == 1 || count <= 64)) {
          const auto xs = stridesOf(xd);
          std::vector<DimExpr> out;
          for (int64_t j = 0; j < count; ++j) {
            int64_t rem = j, off = 0;
            for (int a = r - 1; a >= 0; --a) {
              off += (cstart[a] + rem % yd[a] * cstep[a]) * xs[a];
              rem /= yd[a];
            }
            out.push_back((*v)[off]);
          }
          c.setValue(0, std::move(out));
        }
      }
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const int r = x.desc.rank();
      std::vector<int64_t> starts, ends, axes, steps;
      if (hasIn(in, 1)) {
        starts = readInts(in[1]);
        ends = readInts(in[2]);
        if (hasIn(in, 3)) axes = readInts(in[3]);
        if (hasIn(in, 4)) steps = readInts(in[4]);
      } else {
        starts = k.attr<std::vector<int64_t>>("starts");
        ends = k.attr<std::vector<int64_t>>("ends");
        if (k.attrs().has("axes")) axes = k.attr<std::vector<int64_t>>("axes");
      }
      if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      if (steps.empty()) steps.assign(starts.size(), 1);
      // Run-time values (a plan's constants included) get the shape rule's checks again: a
      // tampered plan must not index past these vectors (found by tests/fuzz plan fuzzer).
      if (ends.size() != starts.size() || axes.size() != starts.size() ||
          steps.size() != starts.size())
        return Status::invalid(
            "starts, ends, axes and steps must have one value per sliced axis, got " +
            std::to_string(starts.size()) + ", " + std::to_string(ends.size()) + ", " +
            std::to_string(axes.size()) + ", " + std::to_string(steps.size()));
      for (size_t i = 0; i < starts.size(); ++i) {
        if (axes[i] < -r || axes[i] >= r)
          return Status::invalid("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                                 std::to_string(r));
        if (steps[i] == 0) return Status::invalid("a step of 0 at axis " + std::to_string(axes[i]));
      }
      std::vector<int64_t> start(r, 0), step(r, 1), dims = x.desc.dims;
      for (size_t i = 0; i < starts.size(); ++i) {
        const int a = wrapAxis(axes[i], r);
        clampAxis(x.desc.dims[a], starts[i], ends[i], steps[i], &start[a], &dims[a]);
        step[a] = usedStep(dims[a], steps[i]);
      }
      if (dims != y.desc.dims)
        return Status::invalid("the slice of " + dimsToString(x.desc.dims) + " has shape " +
                               dimsToString(dims) + ", not the planned " +
                               dimsToString(y.desc.dims));
      const auto xs = stridesOf(x.desc.dims);
      int64_t base = 0;
      std::vector<int64_t> st(r);
      for (int a = 0; a < r; ++a) {
        base += start[a] * xs[a];
        st[a] = step[a] * xs[a];
      }
      return visitBySize(x.desc.dtype, "Slice", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const S* px = static_cast<const S*>(x.data) + base;
        S* py = static_cast<S*>(y.data);
        forEachRun(y.desc.dims, {st},
                   [&](int64_t o, const int64_t* off, int64_t n, const int64_t* s) {
                     for (int64_t i = 0; i < n; ++i) py[o + i] = px[off[0] + i * s[0]];
                   });
        return Status::ok();
      });
    });
}  // namespace opforge::ops
