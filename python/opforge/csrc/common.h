// opforge._C — shared pieces of the Python glue: Status -> Python exception, attribute and
// dimension-expression conversions. Only the public headers (include/opforge) are used; every op
// runs through libopforge's registry and the op libraries' C ABI.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "opforge/op.h"
#include "opforge/registry.h"
#include "opforge/shape.h"
#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge::py_glue {

namespace py = pybind11;

// An error Status travelling to Python; translated into the exception class the Python package
// registered for its code (opforge._errors), with the engine's message unchanged.
struct StatusError {
  int code;
  std::string message;
};

[[noreturn]] inline void raise(const Status& st) {
  throw StatusError{static_cast<int>(st.code()), st.message()};
}
inline void check(const Status& st) {
  if (!st.isOk()) raise(st);
}
template <typename T>
T unwrap(Result<T> r) {
  if (!r.isOk()) raise(r.status());
  return std::move(r).value();
}

// Dimension expressions for Python: an int (constant), a str (symbol) or a tuple
// (op, lhs, rhs) with op one of "+", "-", "*", "floordiv", "ceildiv", "min", "max".
py::object dimToPy(const DimExpr& e);
DimExpr dimFromPy(const py::handle& h);
py::list dimsToPy(const std::vector<DimExpr>& dims);

// Attribute values: Python value -> the declared type (validateAttrs then checks and converts);
// AttrValue -> Python value.
AttrValue attrFromPy(const AttrDef& def, const py::handle& v);
py::object attrToPy(const AttrValue& v);

void bindOps(py::module_& m);
void bindEngine(py::module_& m);
void bindPlugin(py::module_& m);

}  // namespace opforge::py_glue
