// ONNX Constant: a tensor given as an attribute (value, or value_float(s) / value_int(s)).
#include <cstring>

#include "../../common/dtype_dispatch.h"

namespace opforge::ops {

// The constant the node defines, from whichever attribute is set (also used by constant.cu).
Result<TensorValue> constantOf(const AttrMap& a) {
  int set = a.has("value") + a.has("value_float") + a.has("value_floats") + a.has("value_int") +
            a.has("value_ints");
  if (set != 1)
    return Status::invalid(
        "exactly one of value, value_float, value_floats, value_int, value_ints must be set (" +
        std::to_string(set) + " are)");
  TensorValue t;
  auto fill = [&](DataType dt, std::vector<int64_t> dims, const void* p) {
    t.desc = TensorDesc{dt, std::move(dims)};
    t.data.resize(t.desc.bytes());
    if (!t.data.empty()) std::memcpy(t.data.data(), p, t.data.size());
  };
  if (a.has("value")) return a.get<TensorValue>("value");
  if (a.has("value_float")) {
    float f = a.get<float>("value_float");
    fill(DataType::kFloat32, {}, &f);
  } else if (a.has("value_int")) {
    int64_t i = a.get<int64_t>("value_int");
    fill(DataType::kInt64, {}, &i);
  } else if (a.has("value_floats")) {
    auto v = a.get<std::vector<float>>("value_floats");
    fill(DataType::kFloat32, {static_cast<int64_t>(v.size())}, v.data());
  } else {
    auto v = a.get<std::vector<int64_t>>("value_ints");
    fill(DataType::kInt64, {static_cast<int64_t>(v.size())}, v.data());
  }
  return t;
}

OPFORGE_OP(Constant, "ai.onnx::Constant")
    .doc("Produces the constant tensor given as an attribute.")
    .output("output")
    .optionalAttr<TensorValue>("value")
    .optionalAttr<double>("value_float")
    .optionalAttr<std::vector<float>>("value_floats")
    .optionalAttr<int64_t>("value_int")
    .optionalAttr<std::vector<int64_t>>("value_ints")
    .check([](const AttrMap& a) -> Status { return constantOf(a).status(); })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      OPFORGE_ASSIGN_OR_RETURN(TensorValue t, constantOf(c.attrs()));
      std::vector<DimExpr> dims(t.desc.dims.begin(), t.desc.dims.end());
      if ((t.desc.dtype == DataType::kInt64 || t.desc.dtype == DataType::kInt32) &&
          t.desc.rank() <= 1 && t.desc.numel() <= 4096) {
        std::vector<DimExpr> vals;
        for (int64_t i = 0; i < t.desc.numel(); ++i)  // exact: INT64_MAX ends are common in Slice
          vals.emplace_back(t.desc.dtype == DataType::kInt64
                                ? reinterpret_cast<const int64_t*>(t.data.data())[i]
                                : int64_t{reinterpret_cast<const int32_t*>(t.data.data())[i]});
        c.setValue(0, std::move(vals));
      }
      return SymDesc::make(t.desc.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor>, std::span<const Tensor> out) -> Status {
      OPFORGE_ASSIGN_OR_RETURN(TensorValue t, constantOf(k.attrs()));
      if (t.data.size() != out[0].bytes())
        return Status::internal("Constant: output size mismatch");
      if (!t.data.empty()) std::memcpy(out[0].data, t.data.data(), t.data.size());
      return Status::ok();
    });

}  // namespace opforge::ops
