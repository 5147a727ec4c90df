// graph.h — the engine's graph IR (internal).
//
// Values are tensors (inputs, constants, node outputs); nodes reference values by index. Node
// order is a topological order. Shapes are symbolic (DimExpr) from the moment a node is added.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "opforge/op.h"
#include "opforge/registry.h"
#include "opforge/shape.h"

namespace opforge::graph {

// Largest constant (elements) handed to a shape rule through ShapeContext::constant().
constexpr int64_t kMaxShapeConstant = 65536;

struct Value {
  std::string name;
  DataType dtype = DataType::kUndefined;
  Format format = Format::kLinear;
  std::vector<DimExpr> dims;
  int producer = -1;  // node index, -1 for inputs and constants
  int producer_output = -1;
  std::shared_ptr<const TensorValue> constant;    // weights / folded constants
  std::optional<std::vector<DimExpr>> sym_value;  // integer contents when known (shape tensors)
  bool is_input = false;
  bool is_output = false;
};

// A node of an If branch runs only when the BOOL value `cond` (one element) holds `when`; a node
// nested in several Ifs has one guard per level, all of which must hold. The runtime reads the
// condition on the host before the first guarded layer and skips the layers whose guards fail.
struct Guard {
  int cond = -1;  // value id
  bool when = true;
  bool operator==(const Guard& o) const { return cond == o.cond && when == o.when; }
};

struct Node {
  std::string name;
  const RegisteredOp* op = nullptr;
  AttrMap attrs;
  std::vector<int> inputs;               // value ids; -1 for an omitted optional input
  std::vector<int> outputs;              // declared outputs, then hidden size tensors
  std::vector<int> aliases;              // per output: aliased input position, or -1
  std::vector<SizeRecord> size_tensors;  // opforge/registry.h
  std::vector<DimAssertion> assertions;
  std::shared_ptr<KernelInstance> instance;
  std::vector<Guard> guards;  // empty: always runs
  bool dead = false;
  // Chosen by the builder:
  std::vector<Format> in_formats, out_formats;
  std::string combo;
  std::vector<int32_t> allowed_tactics;  // from the chosen combination; empty: any
  int32_t tactic = 0;
  double build_time_ms = -1;
  bool builder_made = false;  // reformat/copy nodes the builder inserted (formats fixed)
};

struct Graph {
  std::string source = "<api>";
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::map<std::string, Format> output_formats;
  std::map<std::string, int> unique_names;  // op name -> count, for default node names

  // Values are only appended; a value's name changes only through renameValue, so that
  // findValue is one hash lookup (a scan of every value made importing a large unrolled Loop
  // quadratic: a fuzzer finding).
  int addValue(Value v) {
    values.push_back(std::move(v));
    const int id = static_cast<int>(values.size()) - 1;
    name_index[values[id].name] = id;
    return id;
  }
  void renameValue(int id, std::string name) {
    auto it = name_index.find(values[id].name);
    if (it != name_index.end() && it->second == id) name_index.erase(it);
    values[id].name = std::move(name);
    name_index[values[id].name] = id;
  }
  // The last value named `name`, or -1.
  int findValue(const std::string& name) const {
    auto it = name_index.find(name);
    if (it == name_index.end()) return -1;
    if (values[it->second].name == name) return it->second;
    for (int i = static_cast<int>(values.size()) - 1; i >= 0; --i)  // renamed past the index
      if (values[i].name == name) return i;
    return -1;
  }
  std::unordered_map<std::string, int> name_index;  // value name -> its last value (findValue)
  std::string uniqueNodeName(const std::string& base);
  std::string uniqueValueName(const std::string& base);
};

// Runs the op's shape rule for node `n` and (re)writes its output values' dtype, dims, values,
// size tensors and assertions.
Status inferNode(Graph& g, int n);

// Creates node `n`'s outputs after its op, attrs and inputs are set: validates attributes,
// instantiates the op and infers shapes. `output_names` may be shorter than the outputs.
Result<int> addNode(Graph& g, const RegisteredOp* op, const std::string& name, const AttrMap& attrs,
                    const std::vector<int>& inputs, const std::vector<std::string>& output_names,
                    bool ignore_unknown_attrs);

// Integer contents of a small constant tensor as DimExprs (nullopt when not an integer tensor or
// larger than `max_elements`).
std::optional<std::vector<DimExpr>> constantAsDims(const TensorValue& t,
                                                   size_t max_elements = 4096);

// "node 'n' (op v1)" for messages.
std::string nodeLabel(const Node& n);

}  // namespace opforge::graph
