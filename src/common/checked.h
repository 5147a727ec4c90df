// checked.h — overflow-checked size arithmetic and the "is this a regular file?" check done
// before a path is opened (internal, header-only: the engine, the CLI and the tests use it).
//
// Element and byte counts of hostile inputs (a model's dims, a plan's offsets, an .npy header)
// must not wrap: every product and sum here reports overflow instead of returning a small number.
// Files are checked with stat() before open(): a FIFO would block open() forever and a directory
// fails only at the first read.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge::checked {

// Documented limits (docs/architecture.md, "Limits and hostile input"): a tensor has at most 2^40
// elements (as the ops' shape rules check, ops/onnx/common/util.h), checked for every tensor at
// every profile point when a network is built; a dimension read from a model (initializer,
// Constant, graph input) is at most 2^31 - 1.
constexpr int64_t kMaxElements = int64_t{1} << 40;
constexpr int64_t kMaxModelDim = (int64_t{1} << 31) - 1;

// a * b, or nullopt when it overflows int64 (either operand negative is allowed).
inline std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// a + b for unsigned offsets, or nullopt when it wraps past 2^64.
inline std::optional<uint64_t> addU(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of the dims; nullopt when a dim is negative or the product overflows int64.
inline std::optional<int64_t> numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    auto p = mul(n, d);
    if (!p) return std::nullopt;
    n = *p;
  }
  return n;
}

// numel(dims) * elem_size; nullopt on a negative dim or when the byte count overflows int64.
inline std::optional<int64_t> bytes(const std::vector<int64_t>& dims, size_t elem_size) {
  auto n = numel(dims);
  if (!n) return std::nullopt;
  return mul(*n, static_cast<int64_t>(elem_size));
}
inline std::optional<int64_t> bytes(const TensorDesc& d) {
  return bytes(d.dims, dtypeSize(d.dtype));
}

// Ok when `path` names a regular file (following symlinks). Otherwise an error naming `what`
// and the path: kNotFound when there is nothing there, kInvalidArgument for a directory, a FIFO,
// a socket or a device. Call before open(): opening a FIFO blocks until a writer appears.
inline Status regularFile(const std::string& path, const std::string& what) {
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0)
    return Status::notFound(what + " '" + path + "': " + std::strerror(errno));
  if (S_ISREG(sb.st_mode)) return Status::ok();
  const char* kind = S_ISDIR(sb.st_mode)    ? "a directory"
                     : S_ISFIFO(sb.st_mode) ? "a FIFO (named pipe)"
                     : S_ISSOCK(sb.st_mode) ? "a socket"
                     : S_ISCHR(sb.st_mode)  ? "a character device"
                     : S_ISBLK(sb.st_mode)  ? "a block device"
                                            : "not a regular file";
  return Status::invalid(what + " '" + path + "' is " + kind + ", not a regular file");
}

}  // namespace opforge::checked
