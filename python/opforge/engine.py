"""opforge.Engine: build a plan from an ONNX file, load and save plans, run them on NumPy arrays or
PyTorch tensors.

    engine = opforge.Engine.build("model.onnx", plugins=["build/lib/libopforge_ops.so"],
                                  profiles={"x": ((1, 3, 32, 32), (4, 3, 32, 32), (16, 3, 32, 32))})
    engine.save("model.plan")
    out = engine.run({"x": np.random.rand(8, 3, 32, 32).astype(np.float32)})   # {"y": ndarray}
    out = opforge.Engine.load("model.plan").run({"x": torch_cuda_tensor})        # {"y": CUDA tensor}

Inputs: NumPy arrays (results are NumPy arrays), PyTorch tensors (results are tensors on the
inputs' device), or any object with __dlpack__ (read through torch.from_dlpack; results are
tensors). With a CUDA plan and CUDA tensors the engine reads the inputs and writes the outputs in
place (setTensorAddress: no copy), ordered with the current PyTorch stream (from the default stream
the plan runs on a side stream that waits for it and that it waits for). Errors raise opforge's exception
classes with the engine's message.
"""
import os
import sys

import numpy as np

from . import _errors, _ops, _shapes
from ._ops import _C

__all__ = ["Engine"]


def _normalize_profiles(profiles):
    if profiles is None:
        return []
    if isinstance(profiles, dict):
        profiles = [profiles]
    out = []
    for p in profiles:
        q = {}
        for name, v in p.items():
            v = list(v)
            if v and all(isinstance(x, (list, tuple)) for x in v):
                if len(v) != 3:
                    raise _errors.InvalidArgumentError(f"profile for input '{name}': give one shape, or (min, opt, max); "
                                                       f"got {len(v)} shapes")
                q[name] = tuple([int(d) for d in s] for s in v)
            else:
                s = [int(d) for d in v]
                q[name] = (s, s, s)
        out.append(q)
    return out


def _bf16_to_f32(a):
    return (a.astype(np.uint32) << 16).view(np.float32)


def _hwc_perm(rank):
    """Memory order of an HWC tensor of logical rank r: (d0, d2, ..., d(r-1), d1)."""
    return [0] + list(range(2, rank)) + [1]


class Engine:
    """A built or loaded plan and one execution context for run()."""

    def __init__(self, c_engine):
        self._e = c_engine
        self._ctx = None
        self._bound = set()
        self._side_streams = {}  # device -> the stream for runs issued from PyTorch's default stream
        io = c_engine.io_tensors()
        self.inputs = [t for t in io if t["is_input"]]
        self.outputs = [t for t in io if not t["is_input"]]

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def build(cls, onnx_path, plugins=(), profiles=None, fp16=False, bf16=False, device="auto", timing_cache=None,
              constant_folding=True, strict_attributes=False, verbose=False, prefer_aot=None, aot_arch=None,
              tf32=True, layer_tactics=(), max_loop_iterations=64):
        """Imports an ONNX file (TensorRT's plugin mapping: op_type, domain / plugin_namespace,
        plugin_version), or takes an opforge.Network, and builds a plan.

        plugins: op libraries to load first (libopforge_ops.so is loaded by `import opforge`).
        profiles: {input: shape} or {input: (min, opt, max)}, or a list of such dicts (one per
        optimization profile); needed when the model has dynamic dimensions.
        device: "cpu", "cuda" (autotuned CUDA tactics) or "auto" (CUDA when PyTorch sees a GPU).
        prefer_aot: for ops defined in Python with both an impl (JIT) and an aot_impl (AOT), which
        one runs (a node attribute `aot` overrides it); AOT nodes become opforge::AotKernel layers
        that the C++ runtime runs without Python. aot_arch: the GPU the AOT images are for
        ("sm_90"; default the current GPU's, else sm_90). tf32: FP32 convolutions and GEMMs may run on
        TF32 tensor cores (as TensorRT's default and `opforge exec`'s; False is `--noTF32`).
        layer_tactics: ["PATTERN=TACTIC", ...] picks layers' tactics instead of timing them
        (`--layerTactics`: PATTERN a node-name glob or an op, TACTIC an id, a name or "reference").
        max_loop_iterations: iterations unrolled for an ONNX Loop whose trip count or condition is
        run-time data (1 to 4096; `--maxLoopIterations`); a run that needs more raises, naming the
        loop."""
        _ops.load_plugins(*(plugins or ()))
        _ops.commit_pending()
        if device not in ("auto", "cpu", "cuda"):
            raise _errors.InvalidArgumentError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
        if device == "auto":
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
        from .network import Network
        common = dict(fp16=bool(fp16), bf16=bool(bf16), tf32=bool(tf32), timing_cache=os.fspath(timing_cache) if timing_cache else "",
                      constant_folding=bool(constant_folding), verbose=bool(verbose),
                      layer_tactics=[str(t) for t in layer_tactics])
        backend = 1 if device == "cuda" else 0
        from .plugin import _aot, registered
        if isinstance(onnx_path, Network):
            net, choices = onnx_path, {}
        elif registered():
            # Python ops may need lowering (JIT or AOT): import here, lower, then build.
            net = Network.__new__(Network)
            net._n = _C.Network.import_onnx(os.fspath(onnx_path), strict_attributes=bool(strict_attributes),
                                            max_loop_iterations=int(max_loop_iterations))
            net._aot = {}
            choices = _aot.onnx_choices(os.fspath(onnx_path), net)
        else:
            e = _C.Engine.build(os.fspath(onnx_path), _normalize_profiles(profiles), backend,
                                strict_attributes=bool(strict_attributes),
                                max_loop_iterations=int(max_loop_iterations), **common)
            return cls(e)
        net = _aot.lower_network(net, device=device, prefer_aot=prefer_aot, arch=aot_arch, choices=choices)
        return cls(_C.Engine.build_network(net._n, _normalize_profiles(profiles), backend, **common))

    @classmethod
    def load(cls, plan, plugins=()):
        """Loads a plan from a file path or from bytes. plugins: op libraries (paths) and Python
        modules (names) to load first; the modules of the plan's ops defined in Python (recorded
        as library "python:<module>") are imported as well."""
        _ops.load_plugins(*(plugins or ()))
        if isinstance(plan, (bytes, bytearray, memoryview)):
            data, name = bytes(plan), "<memory>"
        else:
            name = os.fspath(plan)
            try:
                with open(name, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise _errors.IoError(f"cannot open plan file '{name}': {e.strerror}") from None
        modules = {}
        for layer, op, library in _C.plan_libraries(data, name):
            if library.startswith("python:"):
                modules.setdefault(library[len("python:"):], []).append(f"{op} (layer '{layer}')")
        for module, users in modules.items():
            if module not in sys.modules:
                _ops.import_module(module, f"{name}: the plan's op(s) {', '.join(users)} are defined in Python by "
                                           f"module {module!r}, but ")
        _ops.commit_pending()
        return cls(_C.Engine.load_bytes(data, name))

    def save(self, path):
        """Writes the plan (atomically: a failure leaves no partial file)."""
        self._e.save(os.fspath(path))

    def serialize(self):
        return self._e.serialize()

    # ---- inspection -------------------------------------------------------------------------
    @property
    def backend(self):
        """"cpu" or "cuda"."""
        return self._e.backend()

    @property
    def device(self):
        return self._e.device_description()

    @property
    def num_profiles(self):
        return self._e.num_profiles()

    def profile_shapes(self, profile, input):
        """(min, opt, max) of a dynamic input in a profile; None for a static input."""
        return self._e.profile_shapes(profile, input)

    def layers(self):
        """[{name, op, combo, tactic, library, inputs, outputs, workspace, build_time_ms}]."""
        return self._e.layers()

    def inspect(self):
        """The report `opforge inspect` prints: layers, ops, shapes, tactics, memory."""
        return self._e.inspect()

    def build_log(self):
        return list(self._e.build_log())

    def synchronize(self):
        """Waits for the last run (CUDA plans run asynchronously on the PyTorch stream when the
        tensors are bound in place)."""
        if self._ctx is not None:
            self._ctx.synchronize()

    def last_run_times(self):
        """{h2d_ms, compute_ms, d2h_ms, cuda_graph} of the last run() (CUDA plans: CUDA events,
        read at synchronize(); the copies take ~0 ms when the tensors were bound in place)."""
        if self._ctx is None:
            raise _errors.InvalidArgumentError("no run yet")
        self._ctx.synchronize()
        return self._ctx.last_run_times()

    def create_execution_context(self):
        """A new low-level context (opforge._C.ExecutionContext) for several concurrent runs."""
        return self._e.create_context()

    # ---- running ------------------------------------------------------------------------------
    def _context(self):
        if self._ctx is None:
            self._ctx = self._e.create_context()
        return self._ctx

    def run(self, feeds, profile=None):
        """Runs the plan on {input name: array}; returns {output name: array} of the inputs' kind."""
        if not isinstance(feeds, dict):
            raise TypeError(f"Engine.run takes a dict {{input name: array}}, got {type(feeds).__name__}")
        names = [t["name"] for t in self.inputs]
        unknown = [n for n in feeds if n not in names]
        if unknown:
            raise _errors.NotFoundError(f"{unknown[0]!r} is not an input of the engine; its inputs: {', '.join(names)}")
        missing = [n for n in names if n not in feeds]
        if missing:
            raise _errors.InvalidArgumentError(f"input {missing[0]!r} is not given; the engine's inputs: {', '.join(names)}")
        torch = None
        values = {}
        kind = "numpy"
        for n, v in feeds.items():
            if isinstance(v, np.ndarray) or np.isscalar(v) or isinstance(v, (list, tuple)):
                values[n] = np.asarray(v)
                continue
            import torch  # noqa: F811
            if isinstance(v, torch.Tensor):
                values[n] = v
            elif hasattr(v, "__dlpack__"):
                values[n] = torch.from_dlpack(v)
            else:
                raise TypeError(f"input {n!r}: expected a NumPy array, a torch.Tensor or a DLPack tensor, got "
                                f"{type(v).__name__}")
            kind = "torch"
        ctx = self._context()
        if profile is not None:
            ctx.set_optimization_profile(int(profile))
        info = {t["name"]: t for t in self.inputs}
        cuda_plan = self.backend == "cuda"
        device = None
        if kind == "torch":
            import torch
            devs = {v.device for v in values.values() if isinstance(v, torch.Tensor)}
            cuda_devs = [d for d in devs if d.type == "cuda"]
            if len(cuda_devs) > 1:
                raise _errors.DeviceError(f"the inputs are on several devices {sorted(map(str, devs))}")
            device = cuda_devs[0] if cuda_devs else torch.device("cpu")
        zero_copy = kind == "torch" and cuda_plan and device.type == "cuda" and \
            all(t["format"] == "LINEAR" for t in self.inputs + self.outputs)
        keep = []  # buffers that must live until the run is done
        # Shapes first (every input), then data.
        for n, v in values.items():
            ctx.set_input_shape(n, [int(d) for d in v.shape])
        for n, v in values.items():
            t = info[n]
            code = self._code(v)
            if code != t["dtype"]:
                raise _errors.DTypeError(f"input {n!r} has dtype {self._dtype_text(v)} but the engine expects "
                                         f"{_shapes.dtype_name(t['dtype'])} ({t['shape']})")
            if zero_copy and isinstance(v, torch.Tensor) and v.device.type == "cuda":
                c = v.contiguous()
                keep.append(c)
                ctx.set_tensor_address(n, c.data_ptr())
                self._bound.add(n)
                continue
            if n in self._bound:
                ctx.set_tensor_address(n, 0)
                self._bound.discard(n)
            host = self._host_array(v, t["format"])
            keep.append(host)
            ctx.set_input(n, host.ctypes.data, host.nbytes)
        outs = {}
        if zero_copy:
            import torch
            pending = []
            for t in self.outputs:
                n = t["name"]
                # Data-dependent sizes are symbols "<node>#k": such outputs are read from the
                # engine's memory after the run; the others are written straight into our tensors.
                shape = None if "#" in t["shape"] else ctx.shape(n)
                if shape is None:
                    if n in self._bound:
                        ctx.set_tensor_address(n, 0)
                        self._bound.discard(n)
                    pending.append(n)
                    continue
                o = torch.empty(shape, dtype=_shapes.torch_dtype(t["dtype"]), device=device)
                ctx.set_tensor_address(n, o.data_ptr())
                self._bound.add(n)
                outs[n] = o
            with torch.cuda.device(device):
                cur = torch.cuda.current_stream(device)
                # The context reads stream 0 as "its own stream", which is non-blocking and so not
                # ordered with PyTorch's default stream (also stream 0): then the plan runs on a
                # side stream that waits for the current one, and the current one waits for it.
                side = self._side_stream(device) if cur.cuda_stream == 0 else None
                if side is not None:
                    side.wait_stream(cur)
                ctx.enqueue((side or cur).cuda_stream)
                if side is not None:
                    cur.wait_stream(side)
                if pending:
                    ctx.synchronize()
                    for n in pending:
                        outs[n] = self._device_tensor(ctx, n, device)
            return {t["name"]: outs[t["name"]] for t in self.outputs}
        for n in list(self._bound):
            ctx.set_tensor_address(n, 0)
            self._bound.discard(n)
        ctx.execute()
        for t in self.outputs:
            n = t["name"]
            code, dims = ctx.output_desc(n)
            mem_dims = [dims[i] for i in _hwc_perm(len(dims))] if t["format"] == "HWC" and len(dims) >= 3 else dims
            if code == 16:
                buf = np.empty(mem_dims, dtype=np.uint16)
            else:
                buf = np.empty(mem_dims, dtype=_shapes.numpy_dtype(code))
            ctx.copy_output(n, buf.ctypes.data, buf.nbytes)
            if mem_dims is not dims:
                inv = np.argsort(_hwc_perm(len(dims)))
                buf = np.ascontiguousarray(buf.transpose(inv))
            if kind == "torch":
                import torch
                tt = torch.from_numpy(buf)
                if code == 16:
                    tt = tt.view(torch.bfloat16)
                outs[n] = tt.to(device) if device is not None and device.type != "cpu" else tt
            else:
                outs[n] = _bf16_to_f32(buf) if code == 16 else buf
        return outs

    @staticmethod
    def _code(v):
        if isinstance(v, np.ndarray):
            return _shapes.code_of_numpy(v.dtype)
        c = _shapes.code_of_torch(v.dtype)
        if c is None:
            raise _errors.DTypeError(f"dtype {v.dtype} is not an opforge data type")
        return c

    @staticmethod
    def _dtype_text(v):
        return str(v.dtype)

    @staticmethod
    def _host_array(v, fmt):
        """A C-contiguous host NumPy array in the input's memory order."""
        if not isinstance(v, np.ndarray):
            import torch
            t = v.detach()
            if t.device.type != "cpu":
                t = t.cpu()
            if t.dtype == torch.bfloat16:
                t = t.view(torch.uint16) if hasattr(torch, "uint16") else t.view(torch.int16)
            v = t.numpy()
        if fmt == "HWC" and v.ndim >= 3:
            v = v.transpose(_hwc_perm(v.ndim))
        return np.ascontiguousarray(v)

    def _side_stream(self, device):
        """One side stream per device for runs issued from PyTorch's default stream."""
        import torch
        if device not in self._side_streams:
            self._side_streams[device] = torch.cuda.Stream(device=device)
        return self._side_streams[device]

    @staticmethod
    def _device_tensor(ctx, name, device):
        """A copy of a CUDA plan's output from the engine's device memory (data-dependent shapes)."""
        import torch
        code, dims, ptr = ctx.device_output(name)
        if 0 in dims:
            return torch.empty(dims, dtype=_shapes.torch_dtype(code), device=device)
        np_code = 4 if code == 16 else code  # bf16 travels as uint16

        class _View:
            __cuda_array_interface__ = {"shape": tuple(dims), "typestr": _shapes.numpy_dtype(np_code).str,
                                        "data": (ptr, False), "version": 3, "strides": None}

        t = torch.as_tensor(_View(), device=device).clone()
        return t.view(torch.bfloat16) if code == 16 else t
