// opforge._C: ops defined in Python (opforge.plugin). A spec made in Python becomes an OpDef
// whose shape rule and kernels call back into Python, each call under the GIL, and joins the
// registry through Registry::addOps with the origin "python:<module>". Shape rules compute with
// opforge's own DimExpr, bound here with Python operators.
#include <cstdint>

#include "common.h"
#include "opforge/runtime.h"
#include "opforge/shape_text.h"

namespace opforge::py_glue {

namespace {

// op.h: tactic ids from 1 << 30 up are CPU tactics (besides the reference, id 0).
constexpr int32_t kCpuTacticBase = 1 << 30;

std::string typeName(const py::handle& h) {
  return Py_TYPE(h.ptr())->tp_name;
}

DimExpr toDim(const py::handle& h) {
  if (py::isinstance<DimExpr>(h)) return h.cast<DimExpr>();
  if (!py::isinstance<py::bool_>(h) &&
      (py::isinstance<py::int_>(h) ||
       (py::hasattr(h, "__index__") && !py::isinstance<py::float_>(h)))) {
    try {
      return DimExpr(py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>());
    } catch (const py::cast_error&) {
      raise(Status::outOfRange("a shape expression constant must fit in 64 bits"));
    }
  }
  raise(Status::invalid("a shape expression must be an int or an opforge DimExpr, got " +
                        typeName(h) + " " + py::repr(h).cast<std::string>()));
}

bool isDimLike(const py::handle& h) {
  return py::isinstance<DimExpr>(h) ||
         (!py::isinstance<py::bool_>(h) && !py::isinstance<py::float_>(h) &&
          (py::isinstance<py::int_>(h) || py::hasattr(h, "__index__")));
}

// The shape context of the running shape rule, for Python (valid only during the call).
struct PyShapeContext {
  ShapeContext* c = nullptr;
  ShapeContext& get() const {
    if (!c)
      raise(Status::invalid(
          "the shape context is used outside its shape rule: TensorDescs and size_tensor() of "
          "a register function are valid only while it runs"));
    return *c;
  }
};

// An error raised in Python keeps its opforge status code (the class attribute status_code that
// opforge._errors sets), other exceptions take `fallback`; the message is Python's str(error).
Status fromPython(py::error_already_set& e, StatusCode fallback) {
  int code = static_cast<int>(fallback);
  std::string msg;
  try {
    py::object v = e.value();
    py::object c = py::getattr(v, "status_code", py::none());
    if (!c.is_none()) code = c.cast<int>();
    msg = py::str(v).cast<std::string>();
  } catch (...) {
    msg = e.what();
  }
  if (code <= 0 || code > static_cast<int>(StatusCode::kInternal))
    code = static_cast<int>(fallback);
  return Status(static_cast<StatusCode>(code), msg);
}

// Python's callables of one op. Never released: Python ops live as long as the process, and a
// release at exit would run after the interpreter is gone.
struct PyFns {
  py::object shape;  // shape(ctx, attrs) -> [(dtype, [dims], alias, size_tensor)]
  py::object run;    // run(tactic, inputs, outputs, attrs, stream) -> None
};

py::dict attrsDict(const AttrMap& m) {
  py::dict d;
  for (const auto& [k, v] : m.all()) d[py::str(k)] = attrToPy(v);
  return d;
}

Result<std::vector<SymDesc>> runShape(const PyFns* fns, ShapeContext& c) {
  py::gil_scoped_acquire gil;
  // Held by Python as long as it likes; it points at `c` only during this call.
  auto ctx = std::make_shared<PyShapeContext>();
  ctx->c = &c;
  struct Detach {
    PyShapeContext& p;
    ~Detach() { p.c = nullptr; }
  } detach{*ctx};
  try {
    py::object res = fns->shape(py::cast(ctx), attrsDict(c.attrs()));
    std::vector<SymDesc> out;
    for (auto item : res.cast<py::list>()) {
      auto t = item.cast<py::tuple>();
      SymDesc d;
      d.dtype = static_cast<DataType>(t[0].cast<int>());
      for (auto e : t[1].cast<py::list>()) d.dims.push_back(toDim(e));
      d.alias = t[2].cast<int>();
      d.size_tensor = t[3].cast<int>();
      out.push_back(std::move(d));
    }
    return out;
  } catch (py::error_already_set& e) {
    Status st = fromPython(e, StatusCode::kInvalidArgument);
    return Status(st.code(), c.error(st.message()).message());
  } catch (const StatusError& e) {
    return Status(static_cast<StatusCode>(e.code), c.error(e.message).message());
  } catch (const std::exception& e) {
    return c.error(std::string("the register function's answer is malformed: ") + e.what());
  }
}

py::object tensorToPy(const Tensor& t) {
  if (!t.data && t.desc.dtype == DataType::kUndefined) return py::none();
  return py::make_tuple(reinterpret_cast<uintptr_t>(t.data), static_cast<int>(t.desc.dtype),
                        t.desc.dims, static_cast<int>(t.device));
}

KernelFn makeKernel(const PyFns* fns, int64_t user_tactic) {
  return [fns, user_tactic](KernelContext& ctx, std::span<const Tensor> ins,
                            std::span<const Tensor> outs) -> Status {
    py::gil_scoped_acquire gil;
    try {
      py::list pin, pout;
      for (const auto& t : ins) pin.append(tensorToPy(t));
      for (const auto& t : outs) pout.append(tensorToPy(t));
      fns->run(user_tactic, pin, pout, attrsDict(ctx.attrs()),
               reinterpret_cast<uintptr_t>(ctx.stream()));
      return Status::ok();
    } catch (py::error_already_set& e) {
      return fromPython(e, StatusCode::kRuntime);
    } catch (const StatusError& e) {
      return Status(static_cast<StatusCode>(e.code), e.message);
    }
  };
}

template <typename T>
void addAttr(OpDef& d, const std::string& name, const std::optional<AttrValue>& def,
             const std::string& doc) {
  if (def)
    d.attr<T>(name, std::get<T>(*def), doc);
  else
    d.attr<T>(name, doc);
}

// A default value of exactly the declared type (attrFromPy gives int64 lists for narrower ints).
AttrValue exactDefault(const AttrDef& def, const py::handle& v) {
  AttrValue a = attrFromPy(def, v);
  auto* wide = std::get_if<std::vector<int64_t>>(&a);
  if (!wide || def.type == AttrType::kInts64) return a;
  auto narrow = [&](auto lo, auto hi, auto tag) -> AttrValue {
    using T = decltype(tag);
    std::vector<T> out;
    for (int64_t x : *wide) {
      if (x < lo || x > hi)
        raise(Status::outOfRange("default of attribute '" + def.name + "': " + std::to_string(x) +
                                 " does not fit in " + attrTypeName(def.type)));
      out.push_back(static_cast<T>(x));
    }
    return AttrValue(std::move(out));
  };
  if (def.type == AttrType::kInts8) return narrow(INT8_MIN, INT8_MAX, int8_t{});
  if (def.type == AttrType::kInts16) return narrow(INT16_MIN, INT16_MAX, int16_t{});
  return narrow(INT32_MIN, INT32_MAX, int32_t{});
}

void declareAttr(OpDef& d, const py::tuple& a) {
  AttrDef def;
  def.name = a[0].cast<std::string>();
  def.type = static_cast<AttrType>(a[1].cast<int>());
  std::optional<AttrValue> v;
  if (a[2].cast<bool>()) v = exactDefault(def, a[3]);
  const std::string doc = a.size() > 4 ? a[4].cast<std::string>() : "";
  switch (def.type) {
    case AttrType::kInt:
      return addAttr<int64_t>(d, def.name, v, doc);
    case AttrType::kFloat:
      return addAttr<double>(d, def.name, v, doc);
    case AttrType::kString:
      return addAttr<std::string>(d, def.name, v, doc);
    case AttrType::kBool:
      return addAttr<bool>(d, def.name, v, doc);
    case AttrType::kBytes:
      return addAttr<Bytes>(d, def.name, v, doc);
    case AttrType::kInts8:
      return addAttr<std::vector<int8_t>>(d, def.name, v, doc);
    case AttrType::kInts16:
      return addAttr<std::vector<int16_t>>(d, def.name, v, doc);
    case AttrType::kInts32:
      return addAttr<std::vector<int32_t>>(d, def.name, v, doc);
    case AttrType::kInts64:
      return addAttr<std::vector<int64_t>>(d, def.name, v, doc);
    case AttrType::kFloats16:
      return addAttr<std::vector<half>>(d, def.name, v, doc);
    case AttrType::kFloats32:
      return addAttr<std::vector<float>>(d, def.name, v, doc);
    case AttrType::kFloats64:
      return addAttr<std::vector<double>>(d, def.name, v, doc);
    case AttrType::kBools:
      return addAttr<std::vector<bool>>(d, def.name, v, doc);
    default:
      raise(Status::unsupported("attribute '" + def.name + "': type " +
                                std::to_string(static_cast<int>(def.type)) +
                                " cannot be declared from Python"));
  }
}

std::vector<std::pair<std::vector<int>, std::string>> posSpecs(const py::handle& h) {
  std::vector<std::pair<std::vector<int>, std::string>> out;
  for (auto p : h.cast<py::list>()) {
    auto t = p.cast<py::tuple>();
    out.emplace_back(t[0].cast<std::vector<int>>(), t[1].cast<std::string>());
  }
  return out;
}

// (types, formats, [(positions, types)], [(positions, formats)], [tactic ids]) -> Combo.
Combo comboFromPy(const py::tuple& t) {
  Combo c;
  c.types = t[0].cast<std::string>();
  c.formats = t[1].cast<std::string>();
  c.pos_types = posSpecs(t[2]);
  c.pos_formats = posSpecs(t[3]);
  c.tactic_ids = t[4].cast<std::vector<int32_t>>();
  return c;
}

OpDef opFromSpec(const py::dict& s) {
  OpDef d(s["key"].cast<std::string>());
  d.version(s["version"].cast<std::string>());
  d.doc(s["doc"].cast<std::string>());
  for (auto n : s["inputs"]) d.input(n.cast<std::string>());
  for (auto n : s["outputs"]) d.output(n.cast<std::string>());
  for (auto a : s["attrs"]) declareAttr(d, a.cast<py::tuple>());
  for (auto c : s["combos"]) d.combo(comboFromPy(c.cast<py::tuple>()));
  // A JIT op's plans keep only the attributes its impl declares (TensorRT's rule).
  if (s.contains("plan_attrs") && !s["plan_attrs"].is_none())
    d.planAttrs(s["plan_attrs"].cast<std::vector<std::string>>());
  auto* fns = new PyFns{s["shape"], s["run"]};  // never released (see PyFns)
  d.shape([fns](ShapeContext& c) -> Result<std::vector<SymDesc>> { return runShape(fns, c); });
  for (auto t : s["tactics"]) {  // (engine id, name, user tactic)
    auto tt = t.cast<py::tuple>();
    d.tactic(tt[0].cast<int32_t>(), tt[1].cast<std::string>(),
             makeKernel(fns, tt[2].cast<int64_t>()));
  }
  return d;
}

}  // namespace

void bindPlugin(py::module_& m) {
  auto dimOp = [](DimExpr (*f)(const DimExpr&, const DimExpr&)) {
    return [f](const py::handle& a, const py::handle& b) { return f(toDim(a), toDim(b)); };
  };
  py::class_<DimExpr>(m, "DimExpr")
      .def(py::init([](const py::handle& v) { return toDim(v); }), py::arg("value"))
      .def_static("symbol", &DimExpr::symbol, py::arg("name"))
      .def_static(
          "parse", [](const std::string& text) { return unwrap(parseDimExpr(text)); },
          py::arg("text"))
      .def(
          "__add__", [](const DimExpr& a, const py::handle& b) { return a + toDim(b); },
          py::is_operator())
      .def(
          "__radd__", [](const DimExpr& a, const py::handle& b) { return toDim(b) + a; },
          py::is_operator())
      .def(
          "__sub__", [](const DimExpr& a, const py::handle& b) { return a - toDim(b); },
          py::is_operator())
      .def(
          "__rsub__", [](const DimExpr& a, const py::handle& b) { return toDim(b) - a; },
          py::is_operator())
      .def(
          "__mul__", [](const DimExpr& a, const py::handle& b) { return a * toDim(b); },
          py::is_operator())
      .def(
          "__rmul__", [](const DimExpr& a, const py::handle& b) { return toDim(b) * a; },
          py::is_operator())
      .def(
          "__floordiv__",
          [](const DimExpr& a, const py::handle& b) { return floorDiv(a, toDim(b)); },
          py::is_operator())
      .def(
          "__rfloordiv__",
          [](const DimExpr& a, const py::handle& b) { return floorDiv(toDim(b), a); },
          py::is_operator())
      .def(
          "__eq__",
          [](const DimExpr& a, const py::handle& b) { return isDimLike(b) && a.sameAs(toDim(b)); },
          py::is_operator())
      .def("__hash__", [](const DimExpr& a) { return py::hash(py::str(a.toString())); })
      .def_property_readonly("is_constant", &DimExpr::isConst)
      .def_property_readonly("is_symbol",
                             [](const DimExpr& a) { return a.kind() == DimExpr::Kind::kSymbol; })
      .def_property_readonly(
          "constant_value",
          [](const DimExpr& a) {
            if (!a.isConst())
              raise(Status::invalid("shape expression " + a.toString() + " is not a constant"));
            return a.constValue();
          })
      .def("__int__",
           [](const DimExpr& a) {
             if (!a.isConst())
               raise(Status::invalid("shape expression " + a.toString() +
                                     " is symbolic: it has no int value at build time"));
             return a.constValue();
           })
      .def("to_py", [](const DimExpr& a) { return dimToPy(a); })
      .def("__str__", &DimExpr::toString)
      .def("__repr__", [](const DimExpr& a) { return "DimExpr(" + a.toString() + ")"; });
  m.def("dim_cdiv", dimOp(&ceilDiv));
  m.def("dim_max", dimOp(&max));
  m.def("dim_min", dimOp(&min));
  m.def("dim_floordiv", dimOp(&floorDiv));

  py::class_<PyShapeContext, std::shared_ptr<PyShapeContext>>(m, "ShapeContext")
      .def_property_readonly("num_inputs",
                             [](const PyShapeContext& c) { return c.get().numInputs(); })
      .def_property_readonly("node", [](const PyShapeContext& c) { return c.get().nodeName(); })
      .def(
          "input",
          [](const PyShapeContext& c, int i) -> py::object {
            if (!c.get().hasInput(i)) return py::none();
            SymDesc d = c.get().input(i);
            return py::make_tuple(static_cast<int>(d.dtype), py::cast(d.dims), d.source);
          },
          py::arg("index"))
      .def(
          "size_tensor",
          [](const PyShapeContext& c, const py::handle& opt, const py::handle& upper, int dtype) {
            SizeTensor s =
                c.get().sizeTensor(toDim(opt), toDim(upper), static_cast<DataType>(dtype));
            return py::make_tuple(s.index, s.symbol);
          },
          py::arg("opt"), py::arg("upper"), py::arg("dtype"))
      .def(
          "require",
          [](const PyShapeContext& c, const py::handle& lhs, const std::string& op,
             const py::handle& rhs, const std::string& message) {
            DimAssertion::Op o = op == "eq" ? DimAssertion::Op::kEq : DimAssertion::Op::kLe;
            if (op != "eq" && op != "le")
              raise(Status::invalid("require: the relation is 'eq' or 'le', got '" + op + "'"));
            c.get().require(toDim(lhs), o, toDim(rhs), message);
          },
          py::arg("lhs"), py::arg("op"), py::arg("rhs"), py::arg("message"));

  m.attr("cpu_tactic_base") = kCpuTacticBase;
  // Registers Python ops (one spec dict each) under `origin` ("python:<module>").
  m.def(
      "register_python_ops",
      [](const std::string& origin, const py::list& specs) {
        std::vector<OpDef> defs;
        for (auto s : specs) defs.push_back(opFromSpec(s.cast<py::dict>()));
        check(Registry::global()->addOps(origin, std::move(defs)));
      },
      py::arg("origin"), py::arg("specs"));
  // The C++ combination parser (expandCombo) on one combination of `positions` positions:
  // the expansion's descriptions, or the parser's error.
  m.def(
      "expand_combo",
      [](const py::tuple& combo, int positions) {
        std::vector<std::string> out;
        for (const auto& c : unwrap(expandCombo(comboFromPy(combo), positions)))
          out.push_back(describe(c));
        return out;
      },
      py::arg("combo"), py::arg("positions"));
  // The layers of a plan (op, library) without resolving its ops: what Engine.load imports first.
  m.def(
      "plan_libraries",
      [](const py::bytes& data, const std::string& name) {
        std::string_view sv = data;
        std::vector<uint8_t> bytes(sv.begin(), sv.end());
        py::list out;
        for (const auto& l : unwrap(Engine::planLayers(bytes, name)))
          out.append(py::make_tuple(l.name, l.op, l.library));
        return out;
      },
      py::arg("data"), py::arg("name") = "<memory>");
}

}  // namespace opforge::py_glue
