// opforge/op.h — the authoring API: an operator declared once.
//
// One OpDef gives the engine everything it needs: the op's key ("namespace::name") and version,
// its inputs and outputs, typed attributes with defaults, a symbolic shape rule, the type/format
// combinations it accepts (TensorRT's plugin grammar), a plain CPU reference kernel (mandatory:
// the oracle every other implementation is compared with) and any number of CUDA tactics.
//
// Usage (ops/contrib/circ_pad/circ_pad.cc):
//
//   OPFORGE_OP(circ_pad, "example::circ_pad_plugin")
//       .doc("Circular padding of the last m/2 dimensions.")
//       .input("x")
//       .output("y")
//       .attr<std::vector<int32_t>>("pads")
//       .check([](const AttrMap& a) -> Status { ... })          // attribute values, at node
//       creation .shape([](ShapeContext& c) -> Result<SymDesc> {          // symbolic: any profile
//         SymDesc y = c.input(0).like();
//         ...
//         return y;
//       })
//       .combos("FP32|FP16, FP32|FP16", "LINEAR")
//       .cpu(circPadReference);
//
//   // ops/contrib/circ_pad/circ_pad.cu — CUDA tactics attach to the op by key:
//   OPFORGE_TACTICS("example::circ_pad_plugin", [](OpDef& d) {
//     d.tactic(1, "cuda.generic", circPadGeneric);
//   });
//
// Combination grammar (as in tensorrt.plugin.AutoTuneCombination):
//   types   "FP32|FP16, FP32|FP16"  one comma-separated entry per position (inputs, then outputs);
//           a single entry applies to every position. "A|B" options move together across the
//           positions that use '|' (the k-th option of each); "A*B" is chosen independently.
//   formats "LINEAR", "HWC", "LINEAR*HWC" — same grammar; a single entry applies to all positions.
//   Combo().pos({0, 1}, "FP32|FP16").tactics({1, 2}) sets positions one by one and restricts the
//   tactics allowed with that combination.
//
// Ownership and threading: OpDefs are created at static-initialisation time and live as long as
// the library that defines them. Kernels must be re-entrant: several execution contexts may run
// the same op at once. Kernels and shape rules report errors as Status; they must not throw.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "opforge/device_error.h"
#include "opforge/shape.h"
#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge {

// ---------------------------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------------------------

enum class AttrType : int32_t {
  kInt = 1,   // int64_t
  kFloat,     // double (ONNX FLOAT arrives as float and is widened)
  kString,    // std::string
  kBool,      // bool
  kBytes,     // Bytes
  kInts8,     // std::vector<int8_t>
  kInts16,    // std::vector<int16_t>
  kInts32,    // std::vector<int32_t>
  kInts64,    // std::vector<int64_t>
  kFloats16,  // std::vector<half>
  kFloats32,  // std::vector<float>
  kFloats64,  // std::vector<double>
  kBools,     // std::vector<bool>
  kTensor,    // TensorValue (a constant of any shape: ONNX Constant's `value`)
};
const char* attrTypeName(AttrType t);

struct Bytes {
  std::vector<uint8_t> data;
  bool operator==(const Bytes&) const = default;
};

// A constant tensor held in host memory.
struct TensorValue {
  TensorDesc desc;
  std::vector<uint8_t> data;  // desc.bytes() bytes, row-major
  bool operator==(const TensorValue&) const = default;
};

using AttrValue = std::variant<std::monostate, int64_t, double, std::string, bool, Bytes,
                               std::vector<int8_t>, std::vector<int16_t>, std::vector<int32_t>,
                               std::vector<int64_t>, std::vector<half>, std::vector<float>,
                               std::vector<double>, std::vector<bool>, TensorValue>;

AttrType attrTypeOf(const AttrValue& v);  // undefined for monostate
std::string attrToString(const AttrValue& v, size_t max_elements = 16);

// C++ type of each AttrType (AttrTraits<T>::type is the AttrType of T).
template <typename T>
struct AttrTraits;
#define OPFORGE_ATTR_TRAIT(T, K)                  \
  template <>                                     \
  struct AttrTraits<T> {                          \
    static constexpr AttrType type = AttrType::K; \
  }
OPFORGE_ATTR_TRAIT(int64_t, kInt);
OPFORGE_ATTR_TRAIT(double, kFloat);
OPFORGE_ATTR_TRAIT(std::string, kString);
OPFORGE_ATTR_TRAIT(bool, kBool);
OPFORGE_ATTR_TRAIT(Bytes, kBytes);
OPFORGE_ATTR_TRAIT(std::vector<int8_t>, kInts8);
OPFORGE_ATTR_TRAIT(std::vector<int16_t>, kInts16);
OPFORGE_ATTR_TRAIT(std::vector<int32_t>, kInts32);
OPFORGE_ATTR_TRAIT(std::vector<int64_t>, kInts64);
OPFORGE_ATTR_TRAIT(std::vector<half>, kFloats16);
OPFORGE_ATTR_TRAIT(std::vector<float>, kFloats32);
OPFORGE_ATTR_TRAIT(std::vector<double>, kFloats64);
OPFORGE_ATTR_TRAIT(std::vector<bool>, kBools);
OPFORGE_ATTR_TRAIT(TensorValue, kTensor);
#undef OPFORGE_ATTR_TRAIT

// Attribute values of one node, validated against the op's declarations: every declared
// attribute is present (defaults filled in) with exactly its declared type.
class AttrMap {
 public:
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const AttrValue* find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  // Typed read. T is the declared type, or int/int32_t (from kInt) or float (from kFloat).
  // Reading a name that is not set (an undeclared name, or an optional attribute the node left
  // out: test has() first) or reading it as another type is a bug in the op: get throws
  // std::logic_error naming the attribute and both types. The plugin ABI turns it into an error
  // status of the shape query or kernel call; it never returns a made-up value.
  template <typename T>
  T get(const std::string& name) const;
  const std::map<std::string, AttrValue>& all() const { return values_; }

 private:
  [[noreturn]] static void throwMissing(const std::string& name);
  [[noreturn]] static void throwWrongType(const std::string& name, const AttrValue& held,
                                          AttrType wanted);
  std::map<std::string, AttrValue> values_;
};

template <typename T>
T AttrMap::get(const std::string& name) const {
  const AttrValue* v = find(name);
  if (!v) throwMissing(name);
  if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int32_t>) {
    auto* p = std::get_if<int64_t>(v);
    if (!p) throwWrongType(name, *v, AttrType::kInt);
    return static_cast<T>(*p);
  } else if constexpr (std::is_same_v<T, float>) {
    auto* p = std::get_if<double>(v);
    if (!p) throwWrongType(name, *v, AttrType::kFloat);
    return static_cast<float>(*p);
  } else {
    auto* p = std::get_if<T>(v);
    if (!p) throwWrongType(name, *v, AttrTraits<T>::type);
    return *p;
  }
}

struct AttrDef {
  std::string name;
  AttrType type = AttrType::kInt;
  std::optional<AttrValue> default_value;  // absent: required, unless `optional`
  std::string doc;
  bool optional = false;  // may be absent (no default); kernels test AttrMap::has()
};

struct IoDef {
  std::string name;
  bool optional = false;  // an input or output that a node may leave out
  bool variadic = false;  // last input only: one or more tensors (Concat, Sum)
  bool value = false;     // input whose *values* the shape rule reads (a shape tensor)
  std::string doc;
  // A value input that only decides output shapes (Reshape's shape, TopK's K): when the shape rule
  // knew its values at build time the kernels never read it, so the builder drops it from the
  // node (graph pass shape_inputs) and a loaded plan accepts it omitted.
  bool shape_only = false;
};

// ---------------------------------------------------------------------------------------------
// Symbolic tensor descriptions and the shape rule
// ---------------------------------------------------------------------------------------------

struct SymDesc {
  DataType dtype = DataType::kUndefined;
  std::vector<DimExpr> dims;
  int alias = -1;        // output aliases this input (in-place), -1 for none
  int source = -1;       // the input this description came from (set by ShapeContext::input)
  int size_tensor = -1;  // this output is size tensor k of the node

  int rank() const { return static_cast<int>(dims.size()); }
  // Dimension i; a negative i counts from the end (-1 is the last).
  DimExpr& dim(int i) { return dims[i < 0 ? i + rank() : i]; }
  const DimExpr& dim(int i) const { return dims[i < 0 ? i + rank() : i]; }
  // Same dtype and dims, a new tensor.
  SymDesc like() const {
    SymDesc d = *this;
    d.alias = -1;
    d.size_tensor = -1;
    return d;
  }
  // The same tensor written in place: the output aliases the input this came from.
  SymDesc aliased() const {
    SymDesc d = like();
    d.alias = source;
    return d;
  }
  static SymDesc make(DataType t, std::vector<DimExpr> dims) {
    SymDesc d;
    d.dtype = t;
    d.dims = std::move(dims);
    return d;
  }
};

// A data-dependent dimension (non-zero's count): known after the node runs. `opt` is the value
// the builder tunes for; `upper` bounds the allocation. The kernel writes the real value into
// the size-tensor output (a 0-D INT32 or INT64 tensor).
struct SizeTensor {
  int index = -1;
  DimExpr symbol;
  DimExpr opt;
  DimExpr upper;
  DataType dtype = DataType::kInt32;
  DimExpr expr() const { return symbol; }
  SymDesc desc() const {
    SymDesc d = SymDesc::make(dtype, {});
    d.size_tensor = index;
    return d;
  }
};

class ShapeContext {
 public:
  virtual ~ShapeContext() = default;
  virtual int numInputs() const = 0;
  // False for an omitted optional input.
  virtual bool hasInput(int i) const = 0;
  // Symbolic description of input i (source = i, so input(i).aliased() aliases it).
  virtual SymDesc input(int i) const = 0;
  virtual const AttrMap& attrs() const = 0;
  template <typename T>
  T attr(const std::string& name) const {
    return attrs().get<T>(name);
  }
  // For inputs declared `value`: the input's integer values, when the builder knows them
  // (a constant, or a shape computed from dimensions). nullopt when unknown.
  virtual std::optional<std::vector<DimExpr>> value(int i) const = 0;
  // For inputs declared `value`: the raw constant, when the input is a constant.
  virtual const TensorValue* constant(int i) const = 0;
  // Declares a data-dependent dimension.
  virtual SizeTensor sizeTensor(DimExpr opt, DimExpr upper, DataType dtype = DataType::kInt32) = 0;
  // Records the integer values of output `out` (for shape tensors: Shape, Concat of shapes...).
  virtual void setValue(int out, std::vector<DimExpr> values) = 0;
  // Records a relation checked for every concrete shape (build profiles and run time).
  virtual void require(DimExpr lhs, DimAssertion::Op op, DimExpr rhs, std::string message) = 0;
  // The node's name and op key, for messages.
  virtual const std::string& nodeName() const = 0;
  virtual const std::string& opKey() const = 0;
  // An InvalidArgument status whose message starts "node '<name>' (<op>): ".
  Status error(const std::string& message) const {
    return Status::invalid("node '" + nodeName() + "' (" + opKey() + "): " + message);
  }
};

using ShapeFn = std::function<Result<std::vector<SymDesc>>(ShapeContext&)>;
using CheckFn = std::function<Status(const AttrMap&)>;

// ---------------------------------------------------------------------------------------------
// Kernels and tactics
// ---------------------------------------------------------------------------------------------

enum class Backend : int32_t { kCpu = 0, kCuda = 1 };

class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const AttrMap& attrs() const = 0;
  template <typename T>
  T attr(const std::string& name) const {
    return attrs().get<T>(name);
  }
  virtual int32_t tactic() const = 0;
  virtual void* stream() const = 0;  // cudaStream_t for CUDA tactics, nullptr on the CPU
  virtual void* workspace() const = 0;
  virtual size_t workspaceSize() const = 0;
  // Where this call's kernels report bad data found on the device (opforge/device_error.h):
  // the layer's record, owned by the engine, or nullptr when nobody reads one (CPU tactics, the
  // autotuner). Kernels clamp bad accesses either way; a tactic never synchronizes to check.
  virtual DeviceErrorRecord* errorRecord() const { return nullptr; }
};

// Kernel: reads `inputs`, writes `outputs` (descriptions are concrete; data-dependent outputs
// carry their upper bound and the kernel writes the real size into the size-tensor output).
using KernelFn = std::function<Status(KernelContext& ctx, std::span<const Tensor> inputs,
                                      std::span<const Tensor> outputs)>;
// Whether a tactic can run these concrete descriptions (alignment, sizes).
using AppliesFn = std::function<bool(const AttrMap&, std::span<const TensorDesc> inputs,
                                     std::span<const TensorDesc> outputs)>;
// Scratch memory the tactic needs, in bytes.
using WorkspaceFn = std::function<size_t(const AttrMap&, std::span<const TensorDesc> inputs,
                                         std::span<const TensorDesc> outputs)>;

struct TacticDef {
  int32_t id = 0;  // 0: the CPU reference; 1 << 30 and up: more CPU tactics; others CUDA
  std::string name;
  Backend backend = Backend::kCpu;
  KernelFn fn;
  AppliesFn applies;      // empty: always applies
  WorkspaceFn workspace;  // empty: none
  // Computes FP32 data on TF32 tensor cores (10-bit mantissa, FP32 accumulation), as cuDNN's and
  // cuBLAS's TF32 modes do. The builder considers such a tactic only when BuilderConfig::tf32 is
  // set (the default, as TensorRT's kTF32; `opforge exec --noTF32` clears it); the op tests hold
  // it to the TF32 tolerance instead of FP32's.
  bool tf32 = false;
  // A view: with output 0 in input 0's storage it writes nothing (its applies() accepts only
  // descriptions under which output 0 is input 0's bytes unchanged, e.g. a Transpose between
  // channels-last and the matching LINEAR order); given separate buffers it copies the bytes.
  // Where one applies the builder chooses it over the op's other tactics of that backend and
  // places the output in the input's storage when nothing writes there in place
  // (BuildState::placeViews); elsewhere it runs as a copy.
  bool in_place = false;
};

// ---------------------------------------------------------------------------------------------
// Type/format combinations
// ---------------------------------------------------------------------------------------------

// One declared combination before expansion.
struct Combo {
  std::string types;    // grammar above; empty with pos() entries
  std::string formats;  // empty: "LINEAR"
  std::vector<std::pair<std::vector<int>, std::string>> pos_types;
  std::vector<std::pair<std::vector<int>, std::string>> pos_formats;
  std::vector<int32_t> tactic_ids;  // empty: every tactic

  Combo() = default;
  Combo(std::string t, std::string f = "LINEAR") : types(std::move(t)), formats(std::move(f)) {}
  Combo& pos(std::vector<int> positions, std::string type_spec, std::string format_spec = "") {
    pos_types.emplace_back(positions, std::move(type_spec));
    if (!format_spec.empty())
      pos_formats.emplace_back(std::move(positions), std::move(format_spec));
    return *this;
  }
  Combo& tactics(std::vector<int32_t> ids) {
    tactic_ids = std::move(ids);
    return *this;
  }
};

// One concrete choice for every position (inputs, then outputs).
struct ConcreteCombo {
  std::vector<DataType> types;
  std::vector<Format> formats;
  std::vector<int32_t> tactic_ids;  // empty: every tactic
  bool operator==(const ConcreteCombo&) const = default;
};
std::string describe(const ConcreteCombo& c);

// Expands a combination for `positions` I/O positions. Errors name the bad token.
Result<std::vector<ConcreteCombo>> expandCombo(const Combo& c, int positions);

// ---------------------------------------------------------------------------------------------
// The op definition
// ---------------------------------------------------------------------------------------------

// What the engine knows about an op without running its code (serialised across the plugin ABI).
struct OpSchema {
  std::string ns;    // "example"
  std::string name;  // "circ_pad_plugin"
  std::string version = "1";
  std::string doc;
  std::vector<IoDef> inputs;
  std::vector<IoDef> outputs;
  std::vector<AttrDef> attrs;
  std::vector<Combo> combos;  // empty: any dtype the shape rule gives, LINEAR
  struct Tactic {
    int32_t id;
    std::string name;
    Backend backend;
    bool tf32 = false;      // TacticDef::tf32
    bool in_place = false;  // TacticDef::in_place
  };
  std::vector<Tactic> tactics;
  std::vector<std::string> aliases;  // other "ns::name" keys that import as this op
  std::string backward;              // "ns::name" of the op computing gradients, if any
  bool elementwise = false;          // output[i] depends only on inputs[i] (fusion passes)
  // The layer kind profiles group time by ("conv", "gemm", "attention", "normalization",
  // "pooling", "reduction", "reformat", "cast", ...; any short word). Empty: "elementwise" for
  // elementwise ops, else "other".
  std::string kind;
  // What a plan stores of a node's attributes. false (every op written in C++): all of them, and
  // a loaded plan re-runs the attribute check and the shape rule on each node. true (TensorRT's
  // JIT Python plugins: only what the impl declares): only the attributes named in plan_attrs;
  // the others serve the build (shape rule, tactic choice) and are absent from a loaded node, so
  // the loader does not re-run its shape rule, its attribute check (if any) sees only the stored
  // ones, and its kernels must read nothing else. The names must be declared attributes.
  bool plan_attrs_only = false;
  std::vector<std::string> plan_attrs;

  std::string key() const { return ns.empty() ? name : ns + "::" + name; }
  // kind, or its default ("elementwise" / "other").
  std::string layerKind() const {
    return !kind.empty() ? kind : elementwise ? "elementwise" : "other";
  }
};

// True when one of the op's combinations lets a position be HWC (channels-last).
bool takesChannelsLast(const OpSchema& s);

// Splits "ns::name" (the last "::" separates; no "::" means the empty namespace).
std::pair<std::string, std::string> splitKey(const std::string& key);

class OpDef {
 public:
  explicit OpDef(const std::string& key);

  OpDef& doc(std::string text);
  OpDef& version(std::string v);
  OpDef& input(std::string name, std::string doc = "");
  OpDef& optionalInput(std::string name, std::string doc = "");
  OpDef& variadicInput(std::string name, std::string doc = "");
  OpDef& valueInput(std::string name, bool optional = false, std::string doc = "");
  // A value input that only decides output shapes (IoDef::shape_only).
  OpDef& shapeInput(std::string name, bool optional = false, std::string doc = "");
  // A variadic input whose values the shape rule reads (Concat of shape tensors).
  OpDef& variadicValueInput(std::string name, std::string doc = "");
  OpDef& output(std::string name, std::string doc = "");
  OpDef& optionalOutput(std::string name, std::string doc = "");
  // The last output, repeated: the shape rule returns one or more (ONNX Split).
  OpDef& variadicOutput(std::string name, std::string doc = "");
  template <typename T>
  OpDef& attr(std::string name, std::string doc = "") {
    schema_.attrs.push_back(
        {std::move(name), AttrTraits<T>::type, std::nullopt, std::move(doc), false});
    return *this;
  }
  template <typename T>
  OpDef& attr(std::string name, T default_value, std::string doc = "") {
    schema_.attrs.push_back({std::move(name), AttrTraits<T>::type,
                             AttrValue(std::move(default_value)), std::move(doc), false});
    return *this;
  }
  // An attribute that may be absent and has no default (e.g. ONNX Constant's value_* family).
  template <typename T>
  OpDef& optionalAttr(std::string name, std::string doc = "") {
    schema_.attrs.push_back(
        {std::move(name), AttrTraits<T>::type, std::nullopt, std::move(doc), true});
    return *this;
  }
  OpDef& check(CheckFn fn);
  // Shape rule returning all outputs, or (overload) the single output.
  OpDef& shape(ShapeFn fn);
  OpDef& shape(std::function<Result<SymDesc>(ShapeContext&)> fn);
  OpDef& combos(std::string types, std::string formats = "LINEAR");
  OpDef& combo(Combo c);
  OpDef& cpu(KernelFn fn);
  OpDef& tactic(int32_t id, std::string name, KernelFn fn, AppliesFn applies = {},
                WorkspaceFn workspace = {});
  // A CUDA tactic that may compute FP32 data in TF32 (TacticDef::tf32): chosen only when the
  // build allows TF32. Example: d.tf32Tactic(13, "cuda.lt0.tf32", run<0, true>, applies<0, true>);
  OpDef& tf32Tactic(int32_t id, std::string name, KernelFn fn, AppliesFn applies = {},
                    WorkspaceFn workspace = {});
  // A view tactic (TacticDef::in_place); `applies` must accept only byte-identical descriptions.
  // Example: d.viewTactic(2, "cuda.view", copyUnlessInPlace, isByteIdentity);
  OpDef& viewTactic(int32_t id, std::string name, KernelFn fn, AppliesFn applies);
  OpDef& alias(std::string key);
  OpDef& backward(std::string key);
  OpDef& elementwise(bool on = true);
  OpDef& kind(std::string k);  // OpSchema::kind, e.g. .kind("conv")
  // OpSchema::plan_attrs: a plan stores only these attributes of the op's nodes (the rest are
  // build-time only). Python ops set it to the attributes their impl declares.
  OpDef& planAttrs(std::vector<std::string> names);
  // Applies a shared fragment of definition (e.g. every broadcasting binary op's rule and kernel).
  template <typename F>
  OpDef& with(F&& fragment) {
    fragment(*this);
    return *this;
  }

  const OpSchema& schema() const { return schema_; }
  const ShapeFn& shapeFn() const { return shape_; }
  const CheckFn& checkFn() const { return check_; }
  const std::vector<TacticDef>& tactics() const { return tactics_; }
  const TacticDef* findTactic(int32_t id) const;

 private:
  OpSchema schema_;
  ShapeFn shape_;
  CheckFn check_;
  std::vector<TacticDef> tactics_;
};

namespace detail {
// The ops defined in the current shared object (each library has its own list).
OpDef& registerOp(const std::string& key);
bool registerTactics(const std::string& key, std::function<void(OpDef&)> fn);
}  // namespace detail

}  // namespace opforge

// Declares an op in the current library: `OPFORGE_OP(ident, "ns::name").input(...)...;`
#define OPFORGE_OP(ident, key)                                                   \
  [[maybe_unused]] static ::opforge::OpDef& OPFORGE_CONCAT(opforge_op_, ident) = \
      ::opforge::detail::registerOp(key)

// Attaches tactics (typically CUDA, from a .cu file) to an op declared elsewhere in the library.
#define OPFORGE_TACTICS(key, ...)                                                 \
  [[maybe_unused]] static const bool OPFORGE_CONCAT(opforge_tactics_, __LINE__) = \
      ::opforge::detail::registerTactics(key, __VA_ARGS__)
