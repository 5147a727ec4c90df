// The shape query and answer of the plugin C ABI (see wire.h): what the engine sends to an op's
// shape rule (attributes, the inputs' symbolic descriptions and values) and what comes back
// (outputs, data-dependent sizes, values, assertions). One encode/decode pair each.
#include "wire.h"

namespace opforge::wire {

void put(Writer& w, const SymDesc& d) {
  w.i32(static_cast<int32_t>(d.dtype));
  put(w, d.dims);
  w.i32(d.alias);
  w.i32(d.size_tensor);
}

SymDesc getSymDesc(Reader& r) {
  SymDesc d;
  d.dtype = static_cast<DataType>(r.i32());
  d.dims = getDims(r);
  d.alias = r.i32();
  d.size_tensor = r.i32();
  return d;
}

void put(Writer& w, const DimAssertion& a) {
  put(w, a.lhs);
  w.u8(static_cast<uint8_t>(a.op));
  put(w, a.rhs);
  w.str(a.message);
}

DimAssertion getAssertion(Reader& r) {
  DimAssertion a;
  a.lhs = getDimExpr(r);
  a.op = static_cast<DimAssertion::Op>(r.u8());
  a.rhs = getDimExpr(r);
  a.message = r.str();
  return a;
}

void put(Writer& w, const ShapeQuery& q) {
  w.str(q.node);
  w.str(q.key);
  w.str(q.symbol_prefix);
  put(w, q.attrs);
  putList(w, q.inputs, [](Writer& w, const InferInput& in) {
    w.boolean(in.present);
    if (!in.present) return;
    put(w, in.desc);
    w.boolean(in.value.has_value());
    if (in.value) put(w, *in.value);
    w.boolean(in.constant != nullptr);
    if (in.constant) put(w, AttrValue(*in.constant));
  });
}

ShapeQuery getShapeQuery(Reader& r) {
  ShapeQuery q;
  q.node = r.str();
  q.key = r.str();
  q.symbol_prefix = r.str();
  q.attrs = getAttrMap(r);
  q.inputs = getList(r, 1, "inputs", [&q](Reader& r) {
    InferInput in;
    in.present = r.boolean();
    if (!in.present) return in;
    in.desc = getSymDesc(r);
    if (r.boolean()) in.value = getDims(r);
    if (r.boolean()) {
      auto v = getAttrValue(r);
      if (auto* t = std::get_if<TensorValue>(&v)) {
        q.constants.push_back(std::move(*t));
        in.constant = &q.constants.back();
      }
    }
    return in;
  });
  return q;
}

void put(Writer& w, const InferResult& a) {
  putList(w, a.outputs, [](Writer& w, const SymDesc& d) { put(w, d); });
  putList(w, a.size_tensors, [](Writer& w, const SizeRecord& s) {
    w.str(s.symbol);
    put(w, s.opt);
    put(w, s.upper);
    w.i32(static_cast<int32_t>(s.dtype));
  });
  putList(w, a.values, [](Writer& w, const std::pair<int, std::vector<DimExpr>>& v) {
    w.i32(v.first);
    put(w, v.second);
  });
  putList(w, a.assertions, [](Writer& w, const DimAssertion& x) { put(w, x); });
}

InferResult getShapeAnswer(Reader& r) {
  InferResult a;
  a.outputs = getList(r, kMinSymDescBytes, "outputs", getSymDesc);
  a.size_tensors =
      getList(r, kMinStrBytes + 2 * kMinDimExprBytes + 4, "size tensors", [](Reader& r) {
        SizeRecord s;
        s.symbol = r.str();
        s.opt = getDimExpr(r);
        s.upper = getDimExpr(r);
        s.dtype = static_cast<DataType>(r.i32());
        return s;
      });
  a.values = getList(r, 4 + kMinDimsBytes, "values", [](Reader& r) {
    const int o = r.i32();
    return std::pair<int, std::vector<DimExpr>>(o, getDims(r));
  });
  a.assertions = getList(r, kMinAssertionBytes, "assertions", getAssertion);
  return a;
}

}  // namespace opforge::wire
