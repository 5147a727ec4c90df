#!/usr/bin/env python3
"""The ONNX backend node tests, generated from the installed `onnx` package.

    node_tests.py generate OUT                  write the cases into OUT (once per onnx version)
    node_tests.py run OUT RUNNER [ARGS...]      generate when needed, then run RUNNER OUT ARGS...

The cases come from the package's own definitions (`onnx.backend.test.case.node`), the same
source the onnx project's `backend-test-tools generate-data` writes its data folder from, so a
fresh clone reproduces the node-test figures with nothing beside the repository. OUT gets one
folder per case, the layout `opforge-onnx-tests` reads:

    OUT/test_<name>/model.onnx
    OUT/test_<name>/test_data_set_<k>/input_<i>.pb   (TensorProto, SequenceProto or OptionalProto)
    OUT/test_<name>/test_data_set_<k>/output_<i>.pb

and OUT/ONNX_VERSION ("onnx 1.23.2, 1884 cases"), written last: a folder without it is incomplete
and is generated again. Generation writes into a temporary sibling folder and renames it into
place, so an interrupted run leaves nothing that looks complete. Exit status 77 (CTest's skip
code) when the onnx package is missing.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings

SKIP = 77


def _load_onnx():
    try:
        import onnx  # noqa: F401
        from onnx import numpy_helper
        from onnx.backend.test.case import node
    except ImportError as e:
        print(f"node_tests.py: the onnx package is not installed ({e}); skipping", file=sys.stderr)
        sys.exit(SKIP)
    return onnx, numpy_helper, node


def _value_proto(numpy_helper, type_proto, value, name):
    """Serializes one input or output value as the proto its graph declaration asks for."""
    if hasattr(value, "SerializeToString"):  # a case that gives the proto itself
        return value
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name)
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name)
    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name)
    import numpy as np  # a case may give a numpy scalar (np.float32) for a rank-0 tensor

    return numpy_helper.from_array(np.asarray(value), name)


def stamp_path(out: str) -> str:
    return os.path.join(out, "ONNX_VERSION")


def generate(out: str) -> str:
    onnx, numpy_helper, node = _load_onnx()
    warnings.simplefilter("ignore")  # the case definitions' own numpy warnings (1/0 -> inf)
    want = f"onnx {onnx.__version__}"
    if os.path.isfile(stamp_path(out)):
        with open(stamp_path(out), encoding="utf-8") as f:
            have = f.read().strip()
        if have.startswith(want + ","):
            return have
    parent = os.path.dirname(os.path.abspath(out)) or "."
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".node-tests-", dir=parent)
    try:
        cases = node.collect_testcases()
        written = 0
        for case in cases:
            if case.kind != "node" or case.model is None:
                continue
            case_dir = os.path.join(tmp, case.name)
            os.makedirs(case_dir)
            with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
                f.write(case.model.SerializeToString())
            graph = case.model.graph
            for k, (inputs, outputs) in enumerate(case.data_sets or []):
                data_dir = os.path.join(case_dir, f"test_data_set_{k}")
                os.makedirs(data_dir)
                for which, values, decls in (("input", inputs, graph.input),
                                             ("output", outputs, graph.output)):
                    for i, value in enumerate(values):
                        proto = _value_proto(numpy_helper, decls[i].type, value, decls[i].name)
                        with open(os.path.join(data_dir, f"{which}_{i}.pb"), "wb") as f:
                            f.write(proto.SerializeToString())
            written += 1
        stamp = f"{want}, {written} cases"
        with open(stamp_path(tmp), "w", encoding="utf-8") as f:
            f.write(stamp + "\n")
        if os.path.exists(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
        return stamp
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "generate":
        print(f"node tests generated: {generate(argv[1])} in {argv[1]}")
        return 0
    if len(argv) >= 3 and argv[0] == "run":
        out, runner, rest = argv[1], argv[2], argv[3:]
        print(f"node tests from the installed package: {generate(out)}", flush=True)
        os.execv(runner, [runner, out, *rest])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
