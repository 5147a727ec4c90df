// opforge._C: ops of the registry for Python — schemas, attribute validation, symbolic shape
// queries (DimExpr trees as Python values, for PyTorch fake kernels and ONNX value_info) and
// running a tactic on caller-owned memory (PyTorch tensors' data pointers and stream).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "common.h"
#include "opforge/combo.h"

namespace opforge::py_glue {

namespace {

const char* kindName(DimExpr::Kind k) {
  switch (k) {
    case DimExpr::Kind::kAdd:
      return "+";
    case DimExpr::Kind::kSub:
      return "-";
    case DimExpr::Kind::kMul:
      return "*";
    case DimExpr::Kind::kFloorDiv:
      return "floordiv";
    case DimExpr::Kind::kCeilDiv:
      return "ceildiv";
    case DimExpr::Kind::kMin:
      return "min";
    case DimExpr::Kind::kMax:
      return "max";
    default:
      return "?";
  }
}

std::string reprOf(const py::handle& h) {
  std::string r = py::repr(h).cast<std::string>();
  if (r.size() > 80) r = r.substr(0, 77) + "...";
  return std::string(Py_TYPE(h.ptr())->tp_name) + " " + r;
}

[[noreturn]] void badAttr(const AttrDef& def, const std::string& want, const py::handle& v) {
  raise(Status::invalid("attribute '" + def.name + "' (" + attrTypeName(def.type) + ") must be " +
                        want + ", got " + reprOf(v)));
}

bool isListType(AttrType t) {
  switch (t) {
    case AttrType::kInts8:
    case AttrType::kInts16:
    case AttrType::kInts32:
    case AttrType::kInts64:
    case AttrType::kFloats16:
    case AttrType::kFloats32:
    case AttrType::kFloats64:
    case AttrType::kBools:
      return true;
    default:
      return false;
  }
}

bool isIntegral(const py::handle& h) {
  return py::isinstance<py::int_>(h) ||
         (py::hasattr(h, "__index__") && !py::isinstance<py::float_>(h));
}

int64_t toInt64(const AttrDef& def, const py::handle& h) {
  try {
    return py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>();
  } catch (const py::cast_error&) {
    raise(Status::outOfRange("attribute '" + def.name + "': " + reprOf(h) +
                             " does not fit in 64 bits"));
  } catch (const py::error_already_set&) {
    raise(Status::outOfRange("attribute '" + def.name + "': " + reprOf(h) +
                             " does not fit in 64 bits"));
  }
}

}  // namespace

py::object dimToPy(const DimExpr& e) {
  switch (e.kind()) {
    case DimExpr::Kind::kConst:
      return py::int_(e.constValue());
    case DimExpr::Kind::kSymbol:
      return py::str(e.symbolName());
    default:
      return py::make_tuple(kindName(e.kind()), dimToPy(e.lhs()), dimToPy(e.rhs()));
  }
}

py::list dimsToPy(const std::vector<DimExpr>& dims) {
  py::list l;
  for (const auto& d : dims) l.append(dimToPy(d));
  return l;
}

DimExpr dimFromPy(const py::handle& h) {
  if (py::isinstance<py::bool_>(h))
    raise(Status::invalid("a dimension must be an int or a symbol name, got a bool"));
  if (isIntegral(h))
    return DimExpr(py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>());
  if (py::isinstance<py::str>(h)) return DimExpr::symbol(h.cast<std::string>());
  if (py::isinstance<py::tuple>(h)) {
    auto t = h.cast<py::tuple>();
    if (t.size() == 3 && py::isinstance<py::str>(t[0])) {
      const std::string op = t[0].cast<std::string>();
      DimExpr a = dimFromPy(t[1]), b = dimFromPy(t[2]);
      if (op == "+") return a + b;
      if (op == "-") return a - b;
      if (op == "*") return a * b;
      if (op == "floordiv") return floorDiv(a, b);
      if (op == "ceildiv") return ceilDiv(a, b);
      if (op == "min") return min(a, b);
      if (op == "max") return max(a, b);
    }
  }
  raise(Status::invalid(
      "a dimension must be an int, a symbol name or an (op, lhs, rhs) tuple, got " + reprOf(h)));
}

AttrValue attrFromPy(const AttrDef& def, const py::handle& v) {
  switch (def.type) {
    case AttrType::kInt:
      if (py::isinstance<py::bool_>(v)) return AttrValue(int64_t{v.cast<bool>()});
      if (!isIntegral(v)) badAttr(def, "an int", v);
      return AttrValue(toInt64(def, v));
    case AttrType::kFloat:
      if (py::isinstance<py::bool_>(v) || !(py::isinstance<py::float_>(v) || isIntegral(v)))
        badAttr(def, "a float", v);
      return AttrValue(py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>());
    case AttrType::kString:
      if (py::isinstance<py::str>(v)) return AttrValue(v.cast<std::string>());
      if (py::isinstance<py::bytes>(v)) return AttrValue(v.cast<std::string>());
      badAttr(def, "a str", v);
    case AttrType::kBool:
      if (py::isinstance<py::bool_>(v)) return AttrValue(v.cast<bool>());
      if (isIntegral(v)) {
        int64_t i = toInt64(def, v);
        if (i == 0 || i == 1) return AttrValue(i == 1);
      }
      badAttr(def, "a bool", v);
    case AttrType::kBytes:
      if (py::isinstance<py::bytes>(v) || py::isinstance<py::str>(v)) {
        std::string s = v.cast<std::string>();
        return AttrValue(Bytes{{s.begin(), s.end()}});
      }
      badAttr(def, "bytes", v);
    case AttrType::kTensor:
      raise(Status::unsupported("attribute '" + def.name +
                                "' is a tensor attribute; opforge's Python bindings do not "
                                "pass tensor attributes"));
    default:
      break;
  }
  if (!isListType(def.type)) raise(Status::internal("unknown attribute type"));
  if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v) ||
      !py::isinstance<py::iterable>(v))
    badAttr(def, "a list", v);
  std::vector<py::object> items;
  for (auto item : py::reinterpret_borrow<py::iterable>(v))
    items.push_back(py::reinterpret_borrow<py::object>(item));
  switch (def.type) {
    case AttrType::kBools: {
      std::vector<bool> out;
      for (const auto& it : items) {
        if (py::isinstance<py::bool_>(it)) {
          out.push_back(it.cast<bool>());
        } else if (isIntegral(it) && (toInt64(def, it) == 0 || toInt64(def, it) == 1)) {
          out.push_back(toInt64(def, it) == 1);
        } else {
          badAttr(def, "a list of bools", v);
        }
      }
      return AttrValue(std::move(out));
    }
    case AttrType::kFloats16:
    case AttrType::kFloats32:
    case AttrType::kFloats64: {
      std::vector<double> out;
      for (const auto& it : items) {
        if (py::isinstance<py::bool_>(it) ||
            !(py::isinstance<py::float_>(it) || isIntegral(it) || py::hasattr(it, "__float__")))
          badAttr(def, "a list of floats", v);
        out.push_back(py::float_(it).cast<double>());
      }
      if (def.type == AttrType::kFloats64) return AttrValue(std::move(out));
      if (def.type == AttrType::kFloats32) {
        for (double d : out)
          if (std::isfinite(d) && std::fabs(d) > 3.4028234663852886e38)
            raise(Status::outOfRange("attribute '" + def.name +
                                     "' (float32[]): " + std::to_string(d) + " overflows float32"));
        return AttrValue(std::vector<float>(out.begin(), out.end()));
      }
      std::vector<half> h;
      for (double d : out) h.push_back(half{floatToHalf(static_cast<float>(d))});
      return AttrValue(std::move(h));
    }
    default: {  // integer lists: int64 here; validateAttrs narrows with range checks
      std::vector<int64_t> out;
      for (const auto& it : items) {
        if (py::isinstance<py::bool_>(it) || !isIntegral(it)) badAttr(def, "a list of ints", v);
        out.push_back(toInt64(def, it));
      }
      if (def.type == AttrType::kInts64) return AttrValue(std::move(out));
      // Empty lists must already have the declared type (no values to convert).
      if (out.empty()) {
        if (def.type == AttrType::kInts8) return AttrValue(std::vector<int8_t>{});
        if (def.type == AttrType::kInts16) return AttrValue(std::vector<int16_t>{});
        return AttrValue(std::vector<int32_t>{});
      }
      return AttrValue(std::move(out));
    }
  }
}

py::object attrToPy(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return py::int_(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return py::float_(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return py::str(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return py::bool_(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return py::bytes(reinterpret_cast<const char*>(x.data.data()), x.data.size());
        } else if constexpr (std::is_same_v<T, std::vector<half>>) {
          py::list l;
          for (const auto& h : x) l.append(py::float_(halfToFloat(h.bits)));
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          py::list l;
          for (bool b : x) l.append(py::bool_(b));
          return l;
        } else if constexpr (std::is_same_v<T, TensorValue>) {
          py::dict d;
          d["dtype"] = static_cast<int>(x.desc.dtype);
          d["dims"] = x.desc.dims;
          d["data"] = py::bytes(reinterpret_cast<const char*>(x.data.data()), x.data.size());
          return d;
        } else {
          py::list l;
          for (const auto& e : x) l.append(py::cast(e));
          return l;
        }
      },
      v);
}

namespace {

const char* backendName(Backend b) {
  return b == Backend::kCuda ? "cuda" : "cpu";
}

py::dict ioToPy(const IoDef& d) {
  py::dict o;
  o["name"] = d.name;
  o["optional"] = d.optional;
  o["variadic"] = d.variadic;
  o["value"] = d.value;
  o["shape_only"] = d.shape_only;
  o["doc"] = d.doc;
  return o;
}

struct ComboMatch {
  bool any = true;               // the op declares no combinations: any dtype the rule gives
  std::vector<int32_t> tactics;  // empty: every tactic
  std::string text;
};

// The builder's combination choice (fitCombo, opforge/combo.h), for contiguous (LINEAR) tensors
// and without precision lowering: every present position must have the combination's type, and
// a combination that would reformat a row-major tensor is not offered.
Result<ComboMatch> matchCombos(const RegisteredOp& op, const std::string& node,
                               const std::vector<DataType>& in_t, const std::vector<int>& in_rank,
                               const std::vector<DataType>& out_t, const std::vector<int>& out_rank,
                               const std::vector<int>& out_alias) {
  const OpSchema& s = op.schema();
  ComboMatch m;
  if (s.combos.empty()) return m;
  m.any = false;
  const size_t nd = s.outputs.size();
  const int positions = static_cast<int>(s.inputs.size() + nd);
  auto declPos = [&](size_t i) { return std::min(i, s.inputs.size() - 1); };
  std::vector<ComboSlot> ins(in_t.size()), outs_s;
  for (size_t i = 0; i < in_t.size(); ++i)
    ins[i] = {in_t[i], Format::kLinear, static_cast<size_t>(in_rank[i])};
  for (size_t o = 0; o < nd && o < out_t.size(); ++o)
    outs_s.push_back({out_t[o], Format::kLinear, static_cast<size_t>(out_rank[o])});
  std::string accepted;
  for (const auto& c : s.combos) {
    auto ex = expandCombo(c, positions);
    if (!ex) return ex.status().withContext("op " + s.key());
    for (const auto& cc : *ex) {
      const ComboFit fit = fitCombo(s, cc, ins, outs_s, out_alias);
      if (!fit.aliases || fit.input_reformats || fit.output_reformats) continue;
      accepted += (accepted.empty() ? "" : " | ") + describe(cc);
      if (fit.types) {
        m.tactics = cc.tactic_ids;
        m.text = describe(cc);
        return m;
      }
    }
  }
  std::string got;
  for (size_t i = 0; i < in_t.size(); ++i) {
    if (in_t[i] == DataType::kUndefined) continue;
    const std::string& n = s.inputs[declPos(i)].name;
    got += (got.empty() ? "" : ", ") + n + ": " + dtypeName(in_t[i]);
  }
  std::string outs;
  for (size_t o = 0; o < nd && o < out_t.size(); ++o)
    outs += (outs.empty() ? "" : ", ") + s.outputs[o].name + ": " + dtypeName(out_t[o]);
  return Status::unsupported(
      "node '" + node + "' (" + s.key() + "): no type combination of the op accepts inputs (" +
      got + ") with outputs (" + outs +
      "); it accepts (inputs, then outputs; row-major tensors): " + accepted);
}

struct InputSpec {
  bool present = false;
  DataType dtype = DataType::kUndefined;
  std::vector<DimExpr> dims;
  std::optional<TensorValue> constant;  // the input's values, when the caller knows them
};

// inputs: None, (dtype, dims) or (dtype, dims, bytes) — bytes: the values (row-major), which value
// inputs' shape rules read (ONNX Split's `split`; the deformable aggregation's tables).
std::vector<InputSpec> inputsFromPy(const py::list& inputs) {
  std::vector<InputSpec> out;
  for (auto h : inputs) {
    InputSpec s;
    if (!h.is_none()) {
      auto t = h.cast<py::tuple>();
      if (t.size() != 2 && t.size() != 3)
        raise(Status::invalid("an input is (dtype, dims), (dtype, dims, bytes) or None"));
      s.present = true;
      s.dtype = static_cast<DataType>(t[0].cast<int>());
      for (auto d : t[1].cast<py::sequence>()) s.dims.push_back(dimFromPy(d));
      if (t.size() == 3 && !t[2].is_none()) {
        TensorValue v;
        v.desc.dtype = s.dtype;
        for (const auto& d : s.dims) {
          if (!d.isConst()) raise(Status::invalid("an input with values needs integer dimensions"));
          v.desc.dims.push_back(d.constValue());
        }
        std::string_view b = t[2].cast<py::bytes>();
        if (b.size() != v.desc.bytes())
          raise(Status::invalid("input values: " + std::to_string(b.size()) + " bytes for " +
                                describe(v.desc)));
        v.data.assign(b.begin(), b.end());
        s.constant = std::move(v);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool isIntegerType(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kBool:
      return true;
    default:
      return false;
  }
}

std::vector<InferInput> toInferInputs(const std::vector<InputSpec>& in) {
  std::vector<InferInput> r(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    r[i].present = in[i].present;
    if (!in[i].present) continue;
    r[i].desc = SymDesc::make(in[i].dtype, in[i].dims);
    if (in[i].constant) {
      const TensorValue& v = *in[i].constant;
      r[i].constant = &v;
      if (isIntegerType(v.desc.dtype)) {
        std::vector<DimExpr> vals;
        for (int64_t k = 0; k < v.desc.numel(); ++k)
          vals.emplace_back(static_cast<int64_t>(loadAsDouble(v.data.data(), v.desc.dtype, k)));
        r[i].value = std::move(vals);
      }
    }
  }
  return r;
}

std::string assertionOp(DimAssertion::Op op) {
  switch (op) {
    case DimAssertion::Op::kEq:
      return "eq";
    case DimAssertion::Op::kLe:
      return "le";
    case DimAssertion::Op::kBroadcast:
      return "broadcast";
  }
  return "?";
}

AttrMap attrsFromPy(const RegisteredOp& op, const std::string& node, const py::dict& attrs) {
  AttrMap given;
  for (auto [k, v] : attrs) {
    const std::string name = k.cast<std::string>();
    if (v.is_none()) continue;  // an optional attribute left out
    const AttrDef* def = nullptr;
    for (const auto& d : op.schema().attrs)
      if (d.name == name) def = &d;
    if (!def) {
      std::string known;
      for (const auto& d : op.schema().attrs)
        known += (known.empty() ? "" : ", ") + d.name + " (" + attrTypeName(d.type) + ")";
      raise(Status::invalid("node '" + node + "' (" + op.key() + "): unknown attribute '" + name +
                            "'; the op's attributes are: " + (known.empty() ? "none" : known)));
    }
    try {
      given.set(name, attrFromPy(*def, v));
    } catch (const StatusError& e) {
      throw StatusError{e.code, "node '" + node + "' (" + op.key() + "): " + e.message};
    }
  }
  return unwrap(op.validateAttrs(node, given));
}

py::dict attrsToPy(const AttrMap& m) {
  py::dict d;
  for (const auto& [k, v] : m.all()) d[py::str(k)] = attrToPy(v);
  return d;
}

// Outputs the shape rule returned (the declared outputs): the registry appends the size
// tensors the rule declared but did not return. Without a variadic output that is the declared
// count; with one, the trailing size-tensor outputs in declaration order are the appended ones.
size_t numDeclared(const OpSchema& s, const InferResult& r) {
  const auto& outs = s.outputs;
  if (outs.empty() || !outs.back().variadic) return std::min(outs.size(), r.outputs.size());
  size_t k = r.outputs.size();
  int next = static_cast<int>(r.size_tensors.size()) - 1;
  while (k > outs.size() && next >= 0 && r.outputs[k - 1].size_tensor == next &&
         r.outputs[k - 1].rank() == 0) {
    --k;
    --next;
  }
  return k;
}

class PyKernel;

class PyOp {
 public:
  explicit PyOp(const RegisteredOp* op) : op_(op) {}
  const RegisteredOp* op() const { return op_; }

  py::dict info() const {
    const OpSchema& s = op_->schema();
    py::dict d;
    d["namespace"] = s.ns;
    d["name"] = s.name;
    d["version"] = s.version;
    d["key"] = s.key();
    d["doc"] = s.doc;
    d["backward"] = s.backward;
    d["aliases"] = s.aliases;
    d["elementwise"] = s.elementwise;
    d["kind"] = s.layerKind();
    d["library"] = op_->library().path;
    d["builtin"] = op_->builtin();
    py::list ins, outs, attrs, tactics, combos;
    for (const auto& i : s.inputs) ins.append(ioToPy(i));
    for (const auto& o : s.outputs) outs.append(ioToPy(o));
    for (const auto& a : s.attrs) {
      py::dict ad;
      ad["name"] = a.name;
      ad["type"] = attrTypeName(a.type);
      ad["type_id"] = static_cast<int>(a.type);
      ad["required"] = !a.default_value && !a.optional;
      ad["optional"] = a.optional;
      ad["has_default"] = a.default_value.has_value();
      ad["default"] = a.default_value ? attrToPy(*a.default_value) : py::object(py::none());
      ad["doc"] = a.doc;
      attrs.append(ad);
    }
    py::list tf32;
    for (const auto& t : s.tactics) {
      tactics.append(py::make_tuple(t.id, t.name, backendName(t.backend)));
      if (t.tf32) tf32.append(t.id);
    }
    d["tf32_tactics"] = tf32;
    const int positions = static_cast<int>(s.inputs.size() + s.outputs.size());
    for (const auto& c : s.combos) {
      auto ex = expandCombo(c, positions);
      if (!ex) continue;
      for (const auto& cc : *ex) {
        py::dict cd;
        py::list types, formats;
        for (auto t : cc.types) types.append(static_cast<int>(t));
        for (auto f : cc.formats) formats.append(formatName(f));
        cd["types"] = types;
        cd["formats"] = formats;
        cd["tactics"] = cc.tactic_ids;
        cd["text"] = describe(cc);
        combos.append(cd);
      }
    }
    d["inputs"] = ins;
    d["outputs"] = outs;
    d["attrs"] = attrs;
    d["tactics"] = tactics;
    d["combos"] = combos;
    return d;
  }

  py::dict validateAttrs(const py::dict& attrs, const std::string& node) const {
    return attrsToPy(attrsFromPy(*op_, node, attrs));
  }

  // Symbolic shape query: inputs are None or (dtype, dims), dims ints, symbol names or
  // expression tuples. Returns the outputs' dtypes and dimension expressions, the size tensors
  // (their symbols are "<prefix><k>"), the assertions, and the combination check.
  py::dict infer(const py::dict& attrs, const py::list& inputs, const std::string& node,
                 const std::string& prefix, bool check_combos) const {
    AttrMap m = attrsFromPy(*op_, node, attrs);
    std::vector<InputSpec> in = inputsFromPy(inputs);
    InferResult r = unwrap(op_->infer(node, m, toInferInputs(in), prefix));
    py::dict d;
    py::list outs, sizes, asserts;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      const auto& od = r.outputs[o];
      py::dict x;
      x["dtype"] = static_cast<int>(od.dtype);
      x["dims"] = dimsToPy(od.dims);
      x["alias"] = od.alias;
      x["size_tensor"] = od.size_tensor;
      outs.append(x);
    }
    for (size_t k = 0; k < r.size_tensors.size(); ++k) {
      const auto& s = r.size_tensors[k];
      py::dict x;
      x["symbol"] = s.symbol;
      x["opt"] = dimToPy(s.opt);
      x["upper"] = dimToPy(s.upper);
      x["dtype"] = static_cast<int>(s.dtype);
      x["output"] = s.output;
      sizes.append(x);
    }
    for (const auto& a : r.assertions)
      asserts.append(py::make_tuple(dimToPy(a.lhs), assertionOp(a.op), dimToPy(a.rhs), a.message));
    d["outputs"] = outs;
    d["size_tensors"] = sizes;
    d["assertions"] = asserts;
    d["num_declared"] = numDeclared(op_->schema(), r);
    if (check_combos) {
      std::vector<DataType> in_t, out_t;
      std::vector<int> in_r, out_r, out_a;
      for (const auto& i : in) {
        in_t.push_back(i.present ? i.dtype : DataType::kUndefined);
        in_r.push_back(static_cast<int>(i.dims.size()));
      }
      for (const auto& o : r.outputs) {
        out_t.push_back(o.dtype);
        out_r.push_back(o.rank());
        out_a.push_back(o.alias);
      }
      ComboMatch cm = unwrap(matchCombos(*op_, node, in_t, in_r, out_t, out_r, out_a));
      d["combo"] = cm.text;
      d["tactics"] = cm.any ? py::object(py::none()) : py::cast(cm.tactics);
    }
    return d;
  }

  std::shared_ptr<PyKernel> kernel(const py::dict& attrs, const std::string& node) const;

 private:
  const RegisteredOp* op_;
};

// A created op (attributes bound) that runs tactics on caller-owned memory.
class PyKernel {
 public:
  PyKernel(const RegisteredOp* op, AttrMap attrs, std::shared_ptr<KernelInstance> inst,
           std::string node)
      : op_(op), attrs_(std::move(attrs)), inst_(std::move(inst)), node_(std::move(node)) {}

  py::dict attrs() const { return attrsToPy(attrs_); }

  // Concrete shapes for `inputs` (None or (dtype, dims)): the outputs (data-dependent sizes at
  // their upper bound), the size tensors, and the tactics of `backend` that apply, each with its
  // workspace. Shape assertions are checked here; a failure names the op and the relation.
  py::dict prepare(const py::list& inputs, int backend) const {
    std::vector<InputSpec> in = inputsFromPy(inputs);
    std::vector<TensorDesc> in_d;
    for (const auto& i : in) {
      TensorDesc d;
      if (i.present) {
        d.dtype = i.dtype;
        for (const auto& e : i.dims) {
          if (!e.isConst()) raise(Status::invalid("prepare: input dimensions must be integers"));
          d.dims.push_back(e.constValue());
        }
      }
      in_d.push_back(std::move(d));
    }
    return unwrap(prepareImpl(in, in_d, static_cast<Backend>(backend)));
  }

  // Runs `tactic`. inputs: None or (address, dtype, dims); outputs: (address, dtype, dims);
  // device 0 = host, 1 = CUDA; stream: a cudaStream_t as an integer (0: the default stream).
  void run(int32_t tactic, const py::list& inputs, const py::list& outputs, uintptr_t workspace,
           uint64_t ws_size, uintptr_t stream, int device) const {
    std::vector<Tensor> in, out;
    auto parse = [&](const py::handle& h) {
      Tensor t;
      if (h.is_none()) return t;
      auto tup = h.cast<py::tuple>();
      t.data = reinterpret_cast<void*>(tup[0].cast<uintptr_t>());
      t.desc.dtype = static_cast<DataType>(tup[1].cast<int>());
      t.desc.dims = tup[2].cast<std::vector<int64_t>>();
      t.device = static_cast<Device>(device);
      return t;
    };
    for (auto h : inputs) in.push_back(parse(h));
    for (auto h : outputs) out.push_back(parse(h));
    Status st;
    {
      py::gil_scoped_release nogil;
      st = inst_->run(tactic, in, out, reinterpret_cast<void*>(workspace), ws_size,
                      reinterpret_cast<void*>(stream));
    }
    if (!st)
      raise(st.withContext("node '" + node_ + "' (" + op_->key() + "), tactic " +
                           std::to_string(tactic)));
  }

 private:
  Result<py::dict> prepareImpl(const std::vector<InputSpec>& in,
                               const std::vector<TensorDesc>& in_d, Backend backend) const {
    OPFORGE_ASSIGN_OR_RETURN(InferResult r,
                             op_->infer(node_, attrs_, toInferInputs(in), node_ + "#"));
    std::map<std::string, int64_t> bound;
    auto look = [&](const std::string& s) -> std::optional<int64_t> {
      auto it = bound.find(s);
      return it == bound.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    for (const auto& s : r.size_tensors) {
      OPFORGE_ASSIGN_OR_RETURN(int64_t u, s.upper.eval(look));
      if (u < 0)
        return Status::invalid("node '" + node_ + "' (" + op_->key() +
                               "): size tensor upper bound " + std::to_string(u) + " is negative");
      bound[s.symbol] = u;
    }
    for (const auto& a : r.assertions) {
      auto l = a.lhs.eval(look), rr = a.rhs.eval(look);
      if (!l || !rr) continue;  // involves a data-dependent size: checked by the kernel
      if (!a.holds(*l, *rr)) {
        const char* rel = a.op == DimAssertion::Op::kEq   ? " == "
                          : a.op == DimAssertion::Op::kLe ? " <= "
                                                          : " broadcasts with ";
        return Status::invalid("node '" + node_ + "' (" + op_->key() + "): " + a.message + ": " +
                               std::to_string(*l) + rel + std::to_string(*rr) + " does not hold");
      }
    }
    std::vector<TensorDesc> out_d;
    std::vector<DataType> in_t, out_t;
    std::vector<int> in_r, out_r, out_a;
    for (const auto& d : in_d) {
      in_t.push_back(d.dtype);
      in_r.push_back(d.rank());
    }
    py::dict res;
    py::list outs, sizes, tactics;
    for (const auto& o : r.outputs) {
      OPFORGE_ASSIGN_OR_RETURN(auto dims, evalDims(o.dims, look));
      for (int64_t d : dims)
        if (d < 0)
          return Status::invalid("node '" + node_ + "' (" + op_->key() +
                                 "): the shape rule gives a negative dimension " +
                                 dimsToString(dims));
      out_d.push_back(TensorDesc{o.dtype, dims});
      out_t.push_back(o.dtype);
      out_r.push_back(o.rank());
      out_a.push_back(o.alias);
      outs.append(py::make_tuple(static_cast<int>(o.dtype), dims, o.alias, o.size_tensor,
                                 dimsToPy(o.dims)));
    }
    for (const auto& s : r.size_tensors)
      sizes.append(py::make_tuple(s.output, s.symbol, bound[s.symbol]));
    OPFORGE_ASSIGN_OR_RETURN(ComboMatch cm,
                             matchCombos(*op_, node_, in_t, in_r, out_t, out_r, out_a));
    std::vector<TensorDesc> td_in = in_d;
    for (const auto& t : op_->schema().tactics) {
      if (t.backend != backend) continue;
      if (!cm.any && !cm.tactics.empty() &&
          std::find(cm.tactics.begin(), cm.tactics.end(), t.id) == cm.tactics.end())
        continue;
      size_t ws = 0;
      if (inst_->tacticApplies(t.id, td_in, out_d, &ws))
        tactics.append(py::make_tuple(t.id, t.name, ws));
    }
    res["outputs"] = outs;
    res["size_tensors"] = sizes;
    res["tactics"] = tactics;
    res["combo"] = cm.text;
    res["num_declared"] = numDeclared(op_->schema(), r);
    return res;
  }

  const RegisteredOp* op_;
  AttrMap attrs_;
  std::shared_ptr<KernelInstance> inst_;
  std::string node_;
};

std::shared_ptr<PyKernel> PyOp::kernel(const py::dict& attrs, const std::string& node) const {
  AttrMap m = attrsFromPy(*op_, node, attrs);
  auto inst = unwrap(op_->instantiate(node, m));
  return std::make_shared<PyKernel>(op_, std::move(m), std::move(inst), node);
}

py::list librariesToPy(const Registry& reg) {
  py::list l;
  for (const auto& lib : reg.libraries()) {
    py::dict d;
    d["path"] = lib.path;
    d["name"] = lib.name;
    d["version"] = lib.version;
    d["num_ops"] = lib.num_ops;
    l.append(d);
  }
  return l;
}

}  // namespace

void bindOps(py::module_& m) {
  py::class_<PyOp>(m, "Op")
      .def("info", &PyOp::info)
      .def("validate_attrs", &PyOp::validateAttrs, py::arg("attrs"), py::arg("node"))
      .def("infer", &PyOp::infer, py::arg("attrs"), py::arg("inputs"), py::arg("node"),
           py::arg("prefix"), py::arg("check_combos") = true)
      .def("kernel", &PyOp::kernel, py::arg("attrs"), py::arg("node"))
      .def_property_readonly("key", [](const PyOp& o) { return o.op()->key(); });

  py::class_<PyKernel, std::shared_ptr<PyKernel>>(m, "Kernel")
      .def("attrs", &PyKernel::attrs)
      .def("prepare", &PyKernel::prepare, py::arg("inputs"), py::arg("backend"))
      .def("run", &PyKernel::run, py::arg("tactic"), py::arg("inputs"), py::arg("outputs"),
           py::arg("workspace"), py::arg("workspace_size"), py::arg("stream"), py::arg("device"));

  m.def("load_library", [](const std::string& path) {
    Status st;
    {
      py::gil_scoped_release nogil;
      st = Registry::global()->loadLibrary(path);
    }
    check(st);
  });
  m.def("libraries", [] { return librariesToPy(*Registry::global()); });
  m.def("libraries_summary", [] { return Registry::global()->librariesSummary(); });
  m.def(
      "ops",
      [](bool builtin) {
        std::vector<PyOp> out;
        for (const RegisteredOp* op : Registry::global()->ops())
          if (builtin || !op->builtin()) out.emplace_back(op);
        return out;
      },
      py::arg("builtin") = false);
  m.def(
      "find_op",
      [](const std::string& key, const std::string& version) -> py::object {
        const RegisteredOp* op = Registry::global()->find(key, version);
        if (!op) return py::none();
        return py::cast(PyOp(op));
      },
      py::arg("key"), py::arg("version") = "1");
  m.def("dtype_name", [](int t) { return dtypeName(static_cast<DataType>(t)); });
  m.def("dim_to_string", [](const py::handle& h) { return dimFromPy(h).toString(); });
  m.def(
      "eval_dim",
      [](const py::handle& h, const py::dict& symbols) {
        std::map<std::string, int64_t> b;
        for (auto [k, v] : symbols) b[k.cast<std::string>()] = v.cast<int64_t>();
        return unwrap(dimFromPy(h).eval([&](const std::string& s) -> std::optional<int64_t> {
          auto it = b.find(s);
          return it == b.end() ? std::nullopt : std::optional<int64_t>(it->second);
        }));
      },
      py::arg("expr"), py::arg("symbols"));
}

}  // namespace opforge::py_glue
