// importer.h — the ONNX importer's internals (src/onnx): name resolution, the topological order,
// one node's import, and control flow (If inlined with guards; Loop and Scan unrolled). The
// public entry points are importOnnx / importOnnxBytes (opforge/network.h).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../graph/graph.h"
#include "onnx/onnx_pb.h"
#include "opforge/network.h"

namespace opforge::onnx_import {

constexpr const char* kOnnxNs = "ai.onnx";

bool isStandardDomain(const std::string& d);
std::string nodeDisplayName(const onnx::NodeProto& n, int index);
Result<AttrValue> convertAttribute(const onnx::AttributeProto& a, const std::string& where);

struct Resolved {
  const RegisteredOp* op = nullptr;
  std::string ns, name, version;
  bool plugin = false;
};
// The op a node names: a standard ONNX op, else a plugin by (plugin_namespace or domain,
// op_type, plugin_version), as TensorRT's parser matches them.
Resolved resolve(const onnx::NodeProto& n, const Registry& reg);
DataType elemType(int32_t t);

// Control flow the importer implements itself (no op of the registry): If, Loop, Scan.
bool isControlFlow(const onnx::NodeProto& n);
// Sequence ops, which the importer also implements itself (sequences.cc): SequenceEmpty,
// SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
// ConcatFromSequence, SplitToSequence. (An Identity of a sequence, importNodes passes on as the
// same list.)
bool isSequenceOp(const onnx::NodeProto& n);
// The nodes of `gp` (and of the subgraphs of its control-flow nodes) whose op no loaded library
// provides, one line each; `path` names the enclosing subgraphs ("If_3/then_branch: ").
void collectUnresolved(const onnx::GraphProto& gp, const Registry& reg, const std::string& path,
                       std::vector<std::string>& out);
// The names a subgraph reads from the graphs around it: what its nodes (and the subgraphs inside
// them) read, and its outputs, less what it defines itself.
void outerReads(const onnx::GraphProto& gp, std::set<std::string>& out);

// A node's INT attribute `name`, or nullopt.
std::optional<int64_t> intAttr(const onnx::NodeProto& n, const std::string& name);
// The one element of a known scalar-like value (a constant, or integer values the shape rules
// know); nullopt when it is computed from run-time data.
std::optional<int64_t> knownScalar(const graph::Graph& g, int v);
// A scalar constant of type t holding v.
TensorValue scalar(DataType t, int64_t v);

// ONNX tensor name -> value id; -1: an optional input left out; <= -2: a sequence (an import-time
// list of tensors, Importer::sequences[-2 - id]).
using Scope = std::unordered_map<std::string, int>;
inline bool isSequenceId(int id) {
  return id <= -2;
}

// A sequence value: known at import time as a list of tensor values (its length and positions
// are never run-time data: inserts, erasures and reads at known positions, loops unrolled).
struct Sequence {
  DataType dtype = DataType::kUndefined;  // SequenceEmpty's dtype, or the elements'
  std::vector<int> items;                 // value ids
};

// Nested subgraphs deeper than this are refused (a hostile model must not exhaust the stack;
// protobuf refuses a model nested about 32 Ifs deep before this is reached).
constexpr int kMaxSubgraphDepth = 16;
// Loop and Scan are unrolled: at most this many iterations, and this many nodes made by one
// unrolled loop (an absurd trip count is an error, not an endless import).
constexpr int64_t kMaxUnrolledIterations = 4096;
constexpr size_t kMaxUnrolledNodes = 200000;
// OnnxImportOptions::max_dynamic_loop_iterations is at most this (the unroll limit itself).

// One import: the graph's nodes, If branches inlined with guards (graph::Guard), loops unrolled.
struct Importer {
  const std::string& file;
  const Registry& reg;
  NetworkDefinition& net;
  graph::Graph& g;
  std::map<std::string, int64_t>& opsets;
  const OnnxImportOptions& options;
  const onnx::GraphProto& root;
  std::unordered_set<std::string> taken;     // value names in use
  std::unordered_set<std::string> reserved;  // the main graph's tensor names
  std::set<std::string> used_names;          // node names in use
  std::vector<Sequence> sequences;           // Scope ids -2, -3, ...

  // The value name of ONNX tensor `name`: the main graph's own (prefix ""), else a subgraph's
  // (prefix "<if>/then_branch/"): itself where no value and no main-graph tensor has it, else
  // made unique with the prefix.
  std::string valueName(const std::string& name, const std::string& prefix);
  Result<std::vector<int>> topoOrder(const onnx::GraphProto& gp, const Scope& scope);
  // Imports the nodes of `gp` into the graph; names resolve through `scope`, which gains the
  // nodes' outputs. Nodes get `guards` (the If branches they are in); `prefix` names the
  // subgraph ("" for the main graph).
  Status importNodes(const onnx::GraphProto& gp, Scope& scope,
                     const std::vector<graph::Guard>& guards, int depth,
                     const std::string& prefix = "");
  Status importNode(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                    const std::vector<graph::Guard>& guards, const std::string& prefix);
  // A node of the registry's op `key` ("ai.onnx::Concat") made by the importer itself.
  // The value inputs of a node whose shape rule failed that are run-time data (small integer
  // tensors of static dims with no known values), each read through an opforge::ReadValues so
  // that the rule sees its values as data-dependent sizes; empty when there are none.
  Result<std::vector<int>> readRuntimeValues(const RegisteredOp& op, const std::string& name,
                                             std::vector<int> inputs,
                                             const std::vector<graph::Guard>& guards);
  Result<int> addOp(const std::string& key, const std::string& name, const AttrMap& attrs,
                    const std::vector<int>& inputs, const std::string& out,
                    const std::vector<graph::Guard>& guards);
  // sequences.cc: one sequence op; a new sequence's Scope id; an error unless `id` is a tensor.
  Status importSequenceOp(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                          const std::vector<graph::Guard>& guards, const std::string& prefix);
  int addSequence(Sequence s);
  Status needTensor(int id, const std::string& where, const std::string& what) const;
  // A subgraph's initializers as constants, into `inner` (control_flow.cc).
  Status importInitializers(const onnx::GraphProto& b, const std::string& where,
                            const std::string& prefix, Scope& inner);

  // control_flow.cc
  Status importIf(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                  const std::vector<graph::Guard>& guards, int depth, const std::string& outer);
  Status importLoop(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                    const std::vector<graph::Guard>& guards, int depth, const std::string& outer);
  Status importScan(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                    const std::vector<graph::Guard>& guards, int depth, const std::string& outer);
  Status importScanAsLoop(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                          const std::vector<graph::Guard>& guards, int depth,
                          const std::string& outer, const onnx::GraphProto& body, int num_state,
                          const std::vector<int64_t>& in_axes, const std::vector<int64_t>& in_dirs,
                          const std::vector<int64_t>& out_axes,
                          const std::vector<int64_t>& out_dirs);
};

}  // namespace opforge::onnx_import
