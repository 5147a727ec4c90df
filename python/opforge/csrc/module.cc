// opforge._C — the Python extension: a thin binding of libopforge's public API (registry, ops,
// symbolic shapes, kernels, ONNX import, builder, runtime). No kernel is compiled here: ops run
// from their op libraries (libopforge_ops.so) through the registry's C ABI.
#include <map>

#include "common.h"
#include "opforge/plugin_abi.h"
#include "opforge/version.h"

namespace opforge::py_glue {
namespace {

// StatusCode number -> Python exception class, filled by opforge/_errors.py at import. The
// classes are kept alive for the life of the process (no destructor at interpreter exit).
std::map<int, PyObject*>& errorTypes() {
  static auto* m = new std::map<int, PyObject*>();
  return *m;
}

}  // namespace
}  // namespace opforge::py_glue

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  using namespace opforge::py_glue;
  m.doc() = "opforge's C++ bindings (libopforge): registry, ops, shapes, kernels, engine";
  m.attr("version") = OPFORGE_VERSION_STRING;
  m.attr("plugin_abi_version") = static_cast<int>(OPFORGE_PLUGIN_ABI_VERSION);

  m.def("_set_error_types", [](const py::dict& types) {
    for (auto [k, v] : types) {
      PyObject* cls = v.ptr();
      Py_INCREF(cls);
      errorTypes()[k.cast<int>()] = cls;
    }
  });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      auto it = errorTypes().find(e.code);
      PyErr_SetString(it != errorTypes().end() ? it->second : PyExc_RuntimeError,
                      e.message.c_str());
    }
  });

  bindOps(m);
  bindEngine(m);
  bindPlugin(m);
}
