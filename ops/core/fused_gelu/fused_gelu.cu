// CUDA tactics of opforge::FusedGeluChain (gelu_tactics.cuh: vec16, scalar, vec16_tiles,
// vec16x4_tiles).
#include "gelu_tactics.cuh"

OPFORGE_TACTICS("opforge::FusedGeluChain", ::opforge::gelu::addGeluTactics);
