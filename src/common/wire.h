// wire.h — opforge's little-endian binary encoding, used for plan files and for everything that
// crosses the plugin ABI (schemas, attributes, shape queries and answers).
//
// Writer appends; Reader is bounds-checked with a sticky error: after the first failure every
// read returns zero/empty and status() names what was being read and at which offset. Counts are
// checked against the bytes left, so a tampered count can not make a reader allocate gigabytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "opforge/op.h"
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

// 64-bit checksum of a byte range (word-wise FNV-1a with a final mix); detects flipped bytes.
uint64_t checksum(const void* data, size_t size, uint64_t seed = 1469598103934665603ull);

}  // namespace opforge::wire
