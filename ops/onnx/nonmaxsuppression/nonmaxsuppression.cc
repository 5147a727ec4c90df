// ONNX NonMaxSuppression (opset 10/11): per batch and class, the boxes whose score is above
// score_threshold, taken greedily in descending score order (equal scores: the lower box index
// first), each dropped when its IoU with a box already taken is above iou_threshold, at most
// max_output_boxes_per_class of them. Output INT64 [K, 3] rows (batch, class, box) in batch, class,
// selection order; K is data dependent: a size tensor bounded by batches * classes *
// min(boxes, max_output_boxes_per_class) when that input is a constant, else batches * classes *
// boxes.
//
// As the ONNX reference: the IoU is computed in FP32 (every operation rounded: the decisions are
// those of the FP32 spec test data), a box of zero or negative area never suppresses and is never
// suppressed, both comparisons are strict, an absent (or empty) max_output_boxes_per_class selects
// nothing, an absent iou_threshold is 0 and an absent score_threshold filters nothing.
// NaN scores (no place in the spec's order) rank as -inf. center_point_box 0: [y1, x1, y2, x2]
// (either corner order); 1: [x_center, y_center, w, h].
#include <algorithm>
#include <numeric>

#include "../common/util.h"

namespace opforge::ops {
namespace {

// Box `b` as (x_min, x_max, y_min, y_max).
struct Extent {
  float x0, x1, y0, y1;
};
Extent extentOf(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[0] + hw, b[1] - hh, b[1] + hh};
  }
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

// Whether candidate `a` is suppressed by the selected box `s`: IoU(a, s) > threshold.
bool suppresses(const Extent& a, const Extent& s, float threshold) {
  const float ix0 = std::max(a.x0, s.x0), ix1 = std::min(a.x1, s.x1);
  if (ix1 <= ix0) return false;
  const float iy0 = std::max(a.y0, s.y0), iy1 = std::min(a.y1, s.y1);
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (a.x1 - a.x0) * (a.y1 - a.y0);
  const float area_s = (s.x1 - s.x0) * (s.y1 - s.y0);
  const float uni = area_a + area_s - inter;
  if (inter <= 0 || area_a <= 0 || area_s <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

// Optional scalar input `i` (rank 0 or 1, at most one element); present means one element.
Status checkScalarInput(ShapeContext& c, int i, const char* name, DataType want) {
  if (!c.hasInput(i)) return Status::ok();
  SymDesc s = c.input(i);
  if (s.dtype != want)
    return c.error(std::string("input '") + name + "' must be " + dtypeName(want) + ", got " +
                   dtypeName(s.dtype));
  if (s.rank() > 1)
    return c.error(std::string("input '") + name + "' must be a scalar or 1-D [1], got " +
                   toString(s.dims));
  if (s.rank() == 1 && s.dim(0).isConst() && s.dim(0).constValue() > 1)
    return c.error(std::string("input '") + name + "' must hold one value, got " +
                   s.dim(0).toString());
  return Status::ok();
}

}  // namespace

OPFORGE_OP(NonMaxSuppression, "ai.onnx::NonMaxSuppression")
    .doc("Greedy non-maximum suppression of boxes per batch and class.")
    .input("boxes", "FP32 [batches, boxes, 4]")
    .input("scores", "FP32 [batches, classes, boxes]")
    .valueInput("max_output_boxes_per_class", true, "INT64 scalar or [1]; absent: 0")
    .optionalInput("iou_threshold", "FP32 scalar or [1]; absent: 0")
    .optionalInput("score_threshold", "FP32 scalar or [1]; absent: no filter")
    .output("selected_indices", "INT64 [K, 3]: (batch, class, box)")
    .attr<int64_t>("center_point_box", int64_t{0},
                   "0: [y1, x1, y2, x2]; 1: [x_center, y_center, width, height]")
    .check([](const AttrMap& a) -> Status {
      const int64_t c = a.get<int64_t>("center_point_box");
      if (c != 0 && c != 1)
        return Status::invalid("center_point_box must be 0 or 1, got " + std::to_string(c));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc boxes = c.input(0), scores = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'boxes'", boxes.dtype, kF32));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'scores'", scores.dtype, kF32));
      if (boxes.rank() != 3)
        return c.error("input 'boxes' must have rank 3 [batches, boxes, 4], got " +
                       toString(boxes.dims));
      if (scores.rank() != 3)
        return c.error("input 'scores' must have rank 3 [batches, classes, boxes], got " +
                       toString(scores.dims));
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, boxes.dim(2), DimExpr(4), "input 'boxes' must have 4 coordinates per box"));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, scores.dim(0), boxes.dim(0),
                                        "'scores' and 'boxes' must have the same batch count"));
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, scores.dim(2), boxes.dim(1),
                    "'scores' (dim 2) and 'boxes' (dim 1) must have the same box count"));
      OPFORGE_RETURN_IF_ERROR(
          checkScalarInput(c, 2, "max_output_boxes_per_class", DataType::kInt64));
      OPFORGE_RETURN_IF_ERROR(checkScalarInput(c, 3, "iou_threshold", DataType::kFloat32));
      OPFORGE_RETURN_IF_ERROR(checkScalarInput(c, 4, "score_threshold", DataType::kFloat32));
      DimExpr per_class = boxes.dim(1);
      if (!c.hasInput(2)) {
        per_class = 0;
      } else if (auto v = c.value(2)) {
        if (v->empty())
          per_class = 0;
        else if (v->size() == 1 && (*v)[0].isConst())
          per_class = min(per_class, DimExpr(std::max<int64_t>((*v)[0].constValue(), 0)));
      }
      const DimExpr upper = boxes.dim(0) * scores.dim(1) * per_class;
      SizeTensor k = c.sizeTensor(upper, upper, DataType::kInt64);
      return SymDesc::make(DataType::kInt64, {k.expr(), 3});
    })
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& boxes = in[0];
      const Tensor& scores = in[1];
      const int64_t nb = boxes.desc.dims[0], nbox = boxes.desc.dims[1], ncls = scores.desc.dims[1];
      const bool center = kc.attr<int64_t>("center_point_box") == 1;
      int64_t max_out = 0;
      if (hasIn(in, 2) && in[2].numel() > 0)
        max_out = std::max<int64_t>(static_cast<const int64_t*>(in[2].data)[0], 0);
      float iou_thr = 0;
      if (hasIn(in, 3) && in[3].numel() > 0) iou_thr = static_cast<const float*>(in[3].data)[0];
      const bool filter = hasIn(in, 4) && in[4].numel() > 0;
      const float score_thr = filter ? static_cast<const float*>(in[4].data)[0] : 0.f;
      const auto* pb = static_cast<const float*>(boxes.data);
      const auto* ps = static_cast<const float*>(scores.data);
      const int64_t capacity = out[0].desc.dims[0];
      auto* py = static_cast<int64_t*>(out[0].data);
      int64_t k = 0;
      std::vector<int64_t> order;
      std::vector<int64_t> taken;
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t c = 0; c < ncls; ++c) {
          const float* s = ps + (b * ncls + c) * nbox;
          order.clear();
          for (int64_t i = 0; i < nbox; ++i)
            if (!filter || s[i] > score_thr) order.push_back(i);
          // NaN ranks below every number (it has no place in the spec's order).
          auto key = [&](int64_t i) {
            return std::isnan(s[i]) ? -std::numeric_limits<float>::infinity() : s[i];
          };
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t x, int64_t y) { return key(x) > key(y); });
          taken.clear();
          for (int64_t i : order) {
            if (static_cast<int64_t>(taken.size()) >= max_out) break;
            const Extent e = extentOf(pb + (b * nbox + i) * 4, center);
            bool keep = true;
            for (int64_t t : taken)
              if (suppresses(e, extentOf(pb + (b * nbox + t) * 4, center), iou_thr)) {
                keep = false;
                break;
              }
            if (!keep) continue;
            taken.push_back(i);
            if (k >= capacity)
              return Status::runtime("more selected boxes than the output can hold (" +
                                     std::to_string(capacity) + ")");
            py[3 * k] = b;
            py[3 * k + 1] = c;
            py[3 * k + 2] = i;
            ++k;
          }
        }
      *static_cast<int64_t*>(out[1].data) = k;
      return Status::ok();
    });
}  // namespace opforge::ops
