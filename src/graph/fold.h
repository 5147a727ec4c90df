// fold.h — evaluating a node on the CPU when its inputs are known (internal).
#pragma once

#include "graph.h"

namespace opforge::graph {

// Whether value v's contents are known: a constant, or an integer tensor of static shape whose
// values the shape rules computed (graph::Value::sym_value, e.g. a Shape of a static input).
bool isKnown(const Graph& g, int v);

// When node n is a built-in op without data-dependent outputs, every input is known and every
// output has a static shape of at most `max_elements` elements (0: any), runs its CPU reference,
// turns its outputs into constants and marks the node dead. Returns whether it did. Errors come
// from the kernel, with the node named.
Result<bool> foldNode(Graph& g, int n, int64_t max_elements);

}  // namespace opforge::graph
