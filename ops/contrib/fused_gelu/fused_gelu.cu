// CUDA tactics of opforge::FusedGelu: the engine's fused GELU tactics
// (ops/core/fused_gelu/gelu_tactics.cuh: vec16, scalar, vec16_tiles, vec16x4_tiles), compiled into
// this library for the seed's plugin op.
#include "../../core/fused_gelu/gelu_tactics.cuh"

OPFORGE_TACTICS("opforge::FusedGelu", ::opforge::gelu::addGeluTactics);
