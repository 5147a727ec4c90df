// npy.h — reading and writing NumPy .npy files (format versions 1.0 to 3.0, little-endian, C
// order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/op.h"

namespace opforge::npy {

// Reads an .npy file. Errors name the file and what is wrong (Fortran order, big-endian, an
// unsupported dtype such as object or complex, a truncated payload, a header over 64 KiB, a
// negative or 64-bit-overflowing dimension, a shape that is not a tuple). Directories, FIFOs and
// other non-regular files are refused before they are opened.
Result<TensorValue> read(const std::string& path);
// The same from `size` bytes in memory; `name` stands for the file in errors.
Result<TensorValue> decode(const uint8_t* data, size_t size, const std::string& name);
// The numpy dtype string for a DataType ("<f4"); BF16 has none and is written as raw "<V2".
std::string descr(DataType t);
// The bytes of an .npy file (format 1.0) holding `desc` and `data`.
std::vector<uint8_t> encode(const TensorDesc& desc, const void* data);
// Writes atomically (temporary file + rename).
Status write(const std::string& path, const TensorDesc& desc, const void* data);

}  // namespace opforge::npy
