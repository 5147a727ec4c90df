// wire.h — opforge's little-endian binary encoding, used for plan files and for everything that
// crosses the plugin ABI (schemas, attributes, shape queries and answers).
//
// Writer appends; Reader is bounds-checked with a sticky error: after the first failure every
// read returns zero/empty and status() names what was being read and at which offset. Counts are
// checked against the bytes left, so a tampered count can not make a reader allocate gigabytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <type_traits>
#include <vector>

#include "opforge/op.h"
#include "opforge/registry.h"
#include "opforge/shape.h"
#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge::wire {

class Writer {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void i32(int32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void blob(const void* p, size_t n) {
    u64(n);
    raw(p, n);
  }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  size_t size() const { return buf_.size(); }
  const std::vector<uint8_t>& buffer() const { return buf_; }
  std::vector<uint8_t> take() { return std::move(buf_); }

 private:
  std::vector<uint8_t> buf_;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, std::string what)
      : p_(data), begin_(data), end_(data + size), what_(std::move(what)) {}

  uint8_t u8() { return scalar<uint8_t>("u8"); }
  uint32_t u32() { return scalar<uint32_t>("u32"); }
  int32_t i32() { return scalar<int32_t>("i32"); }
  uint64_t u64() { return scalar<uint64_t>("u64"); }
  int64_t i64() { return scalar<int64_t>("i64"); }
  double f64() { return scalar<double>("f64"); }
  bool boolean() { return u8() != 0; }
  std::string str();
  std::vector<uint8_t> blob();
  // A count of elements that each take at least `min_bytes` bytes; fails when the rest of the
  // buffer could not hold them.
  uint64_t count(size_t min_bytes, const char* field);
  bool raw(void* dst, size_t n, const char* field);
  const uint8_t* skip(size_t n, const char* field);

  bool ok() const { return ok_; }
  bool atEnd() const { return p_ == end_; }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  void fail(const std::string& message);
  Status status() const { return ok_ ? Status() : Status::corrupt(error_); }

 private:
  template <typename T>
  T scalar(const char* field) {
    T v{};
    raw(&v, sizeof(T), field);
    return v;
  }
  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
  std::string what_;
  bool ok_ = true;
  std::string error_;
};

// Lists: a u64 count, then each element. getList refuses a count that the bytes left could not
// hold at `min_bytes` per element (so a tampered count allocates nothing), reads the elements with
// `get_one` and stops at the first error.
template <typename T, typename PutOne>
void putList(Writer& w, const std::vector<T>& v, PutOne put_one) {
  w.u64(v.size());
  for (const auto& x : v) put_one(w, x);
}
template <typename GetOne>
auto getList(Reader& r, size_t min_bytes, const char* field, GetOne get_one) {
  std::vector<std::decay_t<decltype(get_one(r))>> v;
  const uint64_t n = r.count(min_bytes, field);
  for (uint64_t i = 0; i < n && r.ok(); ++i) v.push_back(get_one(r));
  return v;
}
// Lists of fixed-size scalars (int32_t, int64_t, half, float, ...) as raw little-endian bytes, of
// bool as one byte each.
template <typename T>
void putScalars(Writer& w, const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  w.u64(v.size());
  if constexpr (std::is_same_v<T, bool>) {
    for (bool b : v) w.u8(b);
  } else {
    w.raw(v.data(), v.size() * sizeof(T));
  }
}
template <typename T>
std::vector<T> getScalars(Reader& r, const char* field) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> v;
  if constexpr (std::is_same_v<T, bool>) {
    const uint64_t n = r.count(1, field);
    for (uint64_t i = 0; i < n && r.ok(); ++i) v.push_back(r.u8() != 0);
  } else {
    const uint64_t n = r.count(sizeof(T), field);
    if (!r.ok()) return v;
    v.resize(n);
    r.raw(v.data(), n * sizeof(T), field);
  }
  return v;
}

// The fewest bytes an encoding takes (getList's `min_bytes`), from the encoders below.
constexpr size_t kMinStrBytes = 8;          // the length
constexpr size_t kMinDimExprBytes = 1 + 8;  // kind, then a constant or a name's length
constexpr size_t kMinDimsBytes = 8;         // the count
constexpr size_t kMinSymDescBytes = 4 + kMinDimsBytes + 4 + 4;  // dtype, dims, alias, size tensor
constexpr size_t kMinAssertionBytes = kMinDimExprBytes + 1 + kMinDimExprBytes + kMinStrBytes;

void put(Writer& w, const DimExpr& e);
DimExpr getDimExpr(Reader& r);
void put(Writer& w, const std::vector<DimExpr>& dims);
std::vector<DimExpr> getDims(Reader& r);
void put(Writer& w, const TensorDesc& d);
TensorDesc getTensorDesc(Reader& r);
void put(Writer& w, const AttrValue& v);
AttrValue getAttrValue(Reader& r);
void put(Writer& w, const AttrMap& m);
AttrMap getAttrMap(Reader& r);
void put(Writer& w, const OpSchema& s);
OpSchema getSchema(Reader& r);
void put(Writer& w, const SymDesc& d);
SymDesc getSymDesc(Reader& r);
void put(Writer& w, const DimAssertion& a);
DimAssertion getAssertion(Reader& r);

// The shape query of the plugin ABI (engine -> library, OpforgeOp::infer): the node, the op, the
// prefix of the symbols its data-dependent sizes get, the attributes and the inputs. Encoded from
// the engine's InferInputs; decoded, each input's constant is owned by `constants` (the query is
// movable, not copyable, so the pointers stay valid).
struct ShapeQuery {
  std::string node, key, symbol_prefix;
  AttrMap attrs;
  std::vector<InferInput> inputs;
  std::deque<TensorValue> constants;  // decoded queries: what inputs[i].constant points to

  ShapeQuery() = default;
  ShapeQuery(ShapeQuery&&) = default;
  ShapeQuery& operator=(ShapeQuery&&) = default;
  ShapeQuery(const ShapeQuery&) = delete;
  ShapeQuery& operator=(const ShapeQuery&) = delete;
};
void put(Writer& w, const ShapeQuery& q);
ShapeQuery getShapeQuery(Reader& r);

// The shape answer (library -> engine): outputs, data-dependent sizes (symbol, opt, upper,
// dtype; which output holds each is settled by the engine, SizeRecord::output is not encoded),
// known integer values of outputs, assertions.
void put(Writer& w, const InferResult& a);
InferResult getShapeAnswer(Reader& r);

// 64-bit checksum of a byte range (word-wise FNV-1a with a final mix); detects flipped bytes.
uint64_t checksum(const void* data, size_t size, uint64_t seed = 1469598103934665603ull);

}  // namespace opforge::wire
