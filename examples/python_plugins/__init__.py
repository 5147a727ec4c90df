"""The TensorRT Python-plugin guide's examples written for opforge.plugin (`import opforge.plugin as
ofp` in place of `import tensorrt.plugin as trtp`). Each module defines its ops when imported;
with examples/ on sys.path, `opforge.load_plugins("python_plugins.circ_pad")` loads one, and a
plan built with its ops loads in another process that can import it.

The namespace is "pyexample": the C++ versions of the same ops (ops/contrib) already own
"example::circ_pad_plugin" and the others in libopforge_ops.so, which `import opforge` loads.
"""
