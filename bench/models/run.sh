#!/usr/bin/env bash
# Model benchmarks on the GPU: opforge vs PyTorch eager / torch.compile / max-autotune on the
# ResNet-style CNN and the transformer encoder layer (bench/models/bench.py). Conventions of
# the GPU checks: OPFORGE_BINARY_DIR holds bin/ and lib/ of a CUDA build, outputs go under
# ${OUT:-/tmp/out}; the markdown table is printed last.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OPFORGE_BINARY_DIR:=build-gpu}"
: "${OUT:=/tmp/out}"
mkdir -p "$OUT"
export OPFORGE_BINARY_DIR OUT
exec python3 bench/models/bench.py --bin "$OPFORGE_BINARY_DIR" --out "$OUT" "$@"
