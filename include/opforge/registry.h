// opforge/registry.h — the ops an engine knows: opforge's built-in ops plus op libraries loaded
// at run time (the `--plugins` flag).
//
// Ops defined while the program runs (Python's opforge.plugin, a test) join through the same C
// table as a library's (Registry::addOps): the same checks, the same duplicate refusal, listed
// with an origin such as "python:my_module" in place of a file.
//
// Ops are keyed by (namespace, name, version); an op may also answer to alias keys (names other
// exporters use). A library is loaded with dlopen and refused, with a message naming the file,
// when it is missing, is not an opforge op library, speaks another plugin ABI version, or defines
// an op that is already registered. Loading the same file twice is a no-op.
//
// Ownership: libraries stay loaded for the life of the process (ops may be referenced by engines
// and plans at any time). A Registry is thread-safe for lookups; load libraries before building
// or loading engines from several threads.
//
// Usage:
//   auto reg = opforge::Registry::create();            // built-in ops only
//   if (auto st = reg->loadLibrary("build/lib/libopforge_ops.so"); !st) { ...st.message()... }
//   const opforge::RegisteredOp* op = reg->find("example", "circ_pad_plugin", "1");
//
//   std::vector<opforge::OpDef> defs;
//   defs.emplace_back("my::twice").input("x").output("y").shape(...).cpu(...);
//   if (auto st = reg->addOps("python:my_module", std::move(defs)); !st) { ...st.message()... }
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opforge/op.h"
#include "opforge/plugin_abi.h"
#include "opforge/status.h"

namespace opforge {

struct LibraryInfo {
  std::string path;  // "<built-in>" for opforge's own ops
  std::string name;
  std::string version;
  int num_ops = 0;
};

// A data-dependent size (NonZero's count) as the engine records it, one record from the shape
// query's answer through the graph node to the plan node: the symbol the dimensions use for it,
// the value the builder tunes for (`opt`), the bound buffers are sized for (`upper`), the dtype
// of the size tensor and the node output that holds it. A shape rule declares one with
// ShapeContext::sizeTensor and gets back the authoring handle opforge::SizeTensor (op.h), whose
// symbol is a DimExpr to compute dimensions with. Plan files store symbol, upper and output
// (opt and dtype are build-time facts; the output tensor carries the dtype).
struct SizeRecord {
  std::string symbol;
  DimExpr opt, upper;
  DataType dtype = DataType::kInt32;
  int output = -1;  // index in the node's outputs (declared outputs, then hidden size tensors)
};

// Result of a shape query.
struct InferResult {
  std::vector<SymDesc> outputs;  // declared outputs, then hidden size-tensor outputs
  std::vector<SizeRecord> size_tensors;
  std::vector<std::pair<int, std::vector<DimExpr>>> values;
  std::vector<DimAssertion> assertions;
};

struct InferInput {
  bool present = false;
  SymDesc desc;
  std::optional<std::vector<DimExpr>> value;
  const TensorValue* constant = nullptr;
};

class KernelInstance;

// An op as the engine sees it: its schema plus the library's C entry points.
class RegisteredOp {
 public:
  const OpSchema& schema() const { return schema_; }
  std::string key() const { return schema_.key(); }
  const LibraryInfo& library() const { return *library_; }
  bool builtin() const { return library_->path == "<built-in>"; }

  // Checks and converts user or ONNX attribute values to the declared types, fills defaults,
  // rejects unknown names (unless `ignore_unknown`), and runs the op's value checks.
  // Errors name the node, the op and the attribute.
  Result<AttrMap> validateAttrs(const std::string& node, const AttrMap& given,
                                bool ignore_unknown = false) const;
  // A loaded plan's node of an op whose plans keep only some attributes
  // (OpSchema::plan_attrs_only): each stored attribute must be one of OpSchema::plan_attrs (a
  // plan holding another was not written by opforge) and is converted as validateAttrs does;
  // the kept attributes' defaults fill in, the others stay absent. kCorrupt or kInvalidArgument
  // errors name the node, the op and the attribute.
  Result<AttrMap> validatePlanAttrs(const std::string& node, const AttrMap& stored) const;
  Result<InferResult> infer(const std::string& node, const AttrMap& attrs,
                            const std::vector<InferInput>& inputs,
                            const std::string& symbol_prefix) const;
  Result<std::shared_ptr<KernelInstance>> instantiate(const std::string& node,
                                                      const AttrMap& attrs) const;

 private:
  friend class Registry;
  friend class KernelInstance;
  OpSchema schema_;
  const OpforgeOp* c_ = nullptr;
  const OpforgeLibrary* lib_ = nullptr;
  std::shared_ptr<LibraryInfo> library_;
};

// A created op (attributes bound) that can run tactics.
class KernelInstance {
 public:
  ~KernelInstance();
  KernelInstance(const KernelInstance&) = delete;
  KernelInstance& operator=(const KernelInstance&) = delete;
  const RegisteredOp& op() const { return *op_; }
  // 1: applies (workspace set); 0: does not apply.
  bool tacticApplies(int32_t tactic, std::span<const TensorDesc> in,
                     std::span<const TensorDesc> out, size_t* workspace) const;
  // Runs `tactic`. `error_record`: where CUDA kernels report bad data (opforge/device_error.h),
  // owned by the caller, who reads it after synchronizing `stream`; nullptr: nothing is reported.
  Status run(int32_t tactic, std::span<const Tensor> in, std::span<const Tensor> out,
             void* workspace, size_t workspace_size, void* stream,
             DeviceErrorRecord* error_record = nullptr) const;

 private:
  friend class RegisteredOp;
  KernelInstance(const RegisteredOp* op, void* handle) : op_(op), handle_(handle) {}
  const RegisteredOp* op_;
  void* handle_;
};

class Registry {
 public:
  // A registry with opforge's built-in ops.
  static std::shared_ptr<Registry> create();
  // The process-wide registry the CLI and the convenience overloads use.
  static std::shared_ptr<Registry> global();

  Status loadLibrary(const std::string& path);
  // Registers ops defined at run time through the C table a library exports (the same
  // validation: a CPU reference and a shape rule, combinations that parse, no key or alias that
  // is already registered). `origin` stands for the library's path: LibraryInfo::path, what a
  // plan records as the op's library and what error messages name ("python:my_module").
  // The registry owns the OpDefs from then on and keeps them for its own lifetime (engines may
  // hold their ops); their functions may be called from any thread. On error nothing is
  // registered, and the message names the op and, for a duplicate, both origins.
  Status addOps(const std::string& origin, std::vector<OpDef> ops);
  // Looks up an op by namespace, name and version, or by an alias key.
  const RegisteredOp* find(const std::string& ns, const std::string& name,
                           const std::string& version) const;
  const RegisteredOp* find(const std::string& key, const std::string& version = "1") const;
  std::vector<LibraryInfo> libraries() const;
  std::vector<const RegisteredOp*> ops() const;
  // "loaded: <built-in> (12 ops), /x/libopforge_ops.so (5 ops)" — for error messages.
  std::string librariesSummary() const;

 private:
  Status addTable(const OpforgeLibrary* lib, const std::string& path);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<RegisteredOp>> ops_;
  std::vector<std::shared_ptr<LibraryInfo>> libs_;
  std::vector<std::string> loaded_real_paths_;
  std::vector<std::shared_ptr<void>> run_time_tables_;  // addOps's tables (detail::OpTable)
};

}  // namespace opforge
