#!/usr/bin/env bash
# From a fresh clone to a working opforge: installs dependencies, builds, and runs the main job —
# the plugin guide's circular-padding model (examples/circ_pad/circ_pad.onnx) built into a plan
# with the contrib op library, saved, reloaded in a second process and run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
scripts/deps.sh
scripts/build.sh
# The Python package (PyTorch ops, ONNX export, engine bindings) against this build.
OPFORGE_BUILD_DIR="${BUILD_DIR:-build}" python3 -m pip install -q --no-build-isolation --no-deps -e python/
echo
echo "== main job: build examples/circ_pad/circ_pad.onnx into build/circ_pad.plan and run it =="
build/bin/opforge exec --onnx=examples/circ_pad/circ_pad.onnx --plugins=build/lib/libopforge_ops.so \
  --minShapes=x:1x3x32x32 --optShapes=x:4x3x32x32 --maxShapes=x:16x3x32x32 \
  --saveEngine=build/circ_pad.plan --skipInference
build/bin/opforge exec --loadEngine=build/circ_pad.plan --plugins=build/lib/libopforge_ops.so \
  --shapes=x:8x3x32x32 --duration=1 --saveOutputs=build/circ_pad_outputs
build/bin/example_circ_pad_api
echo
echo "opforge is ready: build/bin/opforge, build/lib/libopforge_ops.so (run scripts/test.sh for the tests)"
