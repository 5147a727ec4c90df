// fold.h — evaluating a node on the CPU when its inputs are known (internal).
#pragma once

#include "graph.h"

namespace opforge::graph {

// Largest output (bytes, all outputs of a node) that folding materializes when the node's inputs
// hold less than an eighth of it: ConstantOfShape([2^40]) or Range(0, 2^40, 1) stay nodes that
// run (and are checked against the limits at build), while a weight's Transpose or Cast is folded
// whatever its size.
constexpr int64_t kMaxFoldBytes = int64_t{64} << 20;

// Whether folding `node` stays within the limits above: every output static with a byte count that
// fits in 64 bits, at most `max_elements` elements each (0: any), and at most kMaxFoldBytes in all
// unless the inputs hold as much.
bool foldable(const Graph& g, const Node& node, int64_t max_elements = 0);

// Whether value v's contents are known: a constant, or an integer tensor of static shape whose
// values the shape rules computed (graph::Value::sym_value, e.g. a Shape of a static input).
bool isKnown(const Graph& g, int v);

// When node n is a built-in op without data-dependent outputs, every input is known and every
// output has a static shape of at most `max_elements` elements (0: any), runs its CPU reference,
// turns its outputs into constants and marks the node dead. Returns whether it did. Errors come
// from the kernel, with the node named.
Result<bool> foldNode(Graph& g, int n, int64_t max_elements);

}  // namespace opforge::graph
