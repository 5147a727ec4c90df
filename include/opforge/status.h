// opforge/status.h — errors as values.
//
// Every public opforge call that can fail returns a Status or a Result<T>. Nothing in opforge
// aborts or throws on bad input: a malformed model, a wrong attribute, a missing plugin or a
// tampered plan file all come back as a Status whose message names the file, node, op and value
// at fault.
//
// Contract:
//   - Status is cheap to copy when ok() (no allocation); an error carries a code and a message.
//   - Result<T> holds either a T or an error Status; value() on an error is a programming bug and
//     is checked with an assert in debug builds.
//   - Messages are complete sentences without a trailing newline, written for the end user.
//
// Usage:
//   opforge::Result<int> parse(std::string_view s) {
//     if (s.empty()) return opforge::Status::invalid("empty string");
//     return 42;
//   }
//   OPFORGE_ASSIGN_OR_RETURN(int v, parse("x"));   // returns the error from the caller
//   OPFORGE_RETURN_IF_ERROR(other_call());
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace opforge {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // bad attribute, shape, model or argument supplied by the user
  kNotFound = 2,         // missing op, file, tensor name, plugin
  kUnsupported = 3,      // valid input that opforge does not implement (dtype, op variant)
  kIo = 4,               // file system error
  kCorrupt = 5,          // truncated or tampered file
  kVersion = 6,          // format or ABI version mismatch
  kOutOfRange = 7,       // a value outside a profile, an index outside a tensor
  kRuntime = 8,          // a kernel failed while running
  kInternal = 9,         // a bug in opforge
};

const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code),
        message_(code == StatusCode::kOk ? nullptr
                                         : std::make_shared<std::string>(std::move(message))) {}

  static Status ok() { return {}; }
  static Status invalid(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status notFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status io(std::string m) { return {StatusCode::kIo, std::move(m)}; }
  static Status corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status version(std::string m) { return {StatusCode::kVersion, std::move(m)}; }
  static Status outOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status runtime(std::string m) { return {StatusCode::kRuntime, std::move(m)}; }
  static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  // Returns a copy whose message is "<prefix>: <message>" (context added by callers up the stack).
  Status withContext(const std::string& prefix) const {
    if (isOk()) return *this;
    return Status(code_, prefix + ": " + message());
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::shared_ptr<const std::string> message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).isOk() && "Result constructed from an ok Status");
  }

  bool isOk() const { return v_.index() == 0; }
  explicit operator bool() const { return isOk(); }
  Status status() const { return isOk() ? Status() : std::get<1>(v_); }

  T& value() & {
    assert(isOk());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(isOk());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(isOk());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace opforge

#define OPFORGE_CONCAT_INNER(a, b) a##b
#define OPFORGE_CONCAT(a, b) OPFORGE_CONCAT_INNER(a, b)

#define OPFORGE_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::opforge::Status _opforge_st = (expr);      \
    if (!_opforge_st.isOk()) return _opforge_st; \
  } while (0)

#define OPFORGE_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.isOk()) return tmp.status();                \
  decl = std::move(tmp).value()

#define OPFORGE_ASSIGN_OR_RETURN(decl, expr) \
  OPFORGE_ASSIGN_OR_RETURN_IMPL(OPFORGE_CONCAT(_opforge_r_, __LINE__), decl, expr)
