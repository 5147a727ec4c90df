/* opforge/plugin_abi.h — the versioned C ABI between the engine and an op library.
 *
 * An op library (libopforge_ops.so or your own) is a shared object built from OpDefs
 * (opforge/op.h). No C++ object crosses the library edge: the library exports two C functions,
 * and everything else travels as the plain structs below or as byte buffers in opforge's wire
 * format (descriptions, attributes, shape queries and answers; see src/common/wire.h). The engine
 * checks the ABI version before it reads anything else.
 *
 *   uint32_t opforge_plugin_abi_version(void);
 *   const OpforgeLibrary* opforge_plugin_get_library(uint32_t engine_abi_version);
 *
 * A library built with opforge gets both from one line in one of its source files:
 *
 *   #include "opforge/plugin_export.h"
 *   OPFORGE_PLUGIN_LIBRARY("my_ops", "1.0.0");
 *
 * and is loaded with `opforge exec --plugins=libmy_ops.so` or Registry::loadLibrary().
 *
 * Rules:
 *   - Buffers a library returns (OpforgeBuffer) are released with the library's free_buffer.
 *   - Functions never throw or abort; they return OPFORGE_ABI_OK or an error code and write a
 *     NUL-terminated message into the caller's `error` buffer (truncated to its capacity).
 *   - Kernel instances (create/destroy) belong to the library; the engine only passes the
 *     opaque pointer back. run() may be called concurrently on one instance.
 *   - Incompatible changes to anything in this file bump OPFORGE_PLUGIN_ABI_VERSION. Structs that
 *     carry struct_size grow only at their end; a reader checks struct_size before it reads an
 *     appended field, so libraries and engines of either age keep working together.
 */
#ifndef OPFORGE_PLUGIN_ABI_H_
#define OPFORGE_PLUGIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef OPFORGE_PLUGIN_ABI_VERSION
/* 2: tf32 tactics, op kinds in the schema; 3: view tactics (TacticDef::in_place); 4: the
 * attributes a plan stores (OpSchema::plan_attrs) */
#define OPFORGE_PLUGIN_ABI_VERSION 4u
#endif

#define OPFORGE_ABI_OK 0
/* Error codes are opforge::StatusCode numbers. */

typedef struct OpforgeBuffer {
  uint8_t* data;
  uint64_t size;
} OpforgeBuffer;

/* A tensor view. dtype = ONNX TensorProto data type number; format 0 = LINEAR, 1 = HWC;
 * device 0 = host, 1 = CUDA. */
typedef struct OpforgeTensor {
  void* data;
  const int64_t* dims;
  int32_t rank;
  int32_t dtype;
  int32_t format;
  int32_t device;
} OpforgeTensor;

typedef struct OpforgeKernelArgs {
  uint32_t struct_size; /* sizeof(OpforgeKernelArgs) as the engine knows it */
  int32_t tactic;
  const OpforgeTensor* inputs;
  int32_t num_inputs;
  const OpforgeTensor* outputs;
  int32_t num_outputs;
  void* workspace;
  uint64_t workspace_size;
  void* stream; /* cudaStream_t for CUDA tactics */
  char* error;
  uint64_t error_capacity;
  /* Appended after ABI version 1's first release: read it only when struct_size covers it
   * (OPFORGE_KERNEL_ARGS_HAS(args, error_record)); an older engine passes a shorter struct.
   * The layer's opforge::DeviceErrorRecord (opforge/device_error.h) in memory the device can
   * write, owned by the engine; NULL when nobody reads one. */
  void* error_record;
} OpforgeKernelArgs;

/* Whether a kernel-args struct of `(args)->struct_size` bytes holds `field`. */
#define OPFORGE_KERNEL_ARGS_HAS(args, field) \
  ((args)->struct_size >= offsetof(OpforgeKernelArgs, field) + sizeof((args)->field))

typedef struct OpforgeOp OpforgeOp;
struct OpforgeOp {
  uint32_t struct_size;
  const void* impl;    /* private to the library */
  const char* key;     /* "ns::name" */
  const char* version; /* "1" */
  /* The op's schema (name, inputs, outputs, attributes, combinations, tactics) in wire format. */
  const uint8_t* schema;
  uint64_t schema_size;
  /* Shape inference: `query` (attributes, symbolic inputs) in, `answer` (outputs, size tensors,
   * assertions) out, both in wire format. Returns OPFORGE_ABI_OK, or an error with `error` set. */
  int32_t (*infer)(const OpforgeOp* op, const uint8_t* query, uint64_t query_size,
                   OpforgeBuffer* answer, char* error, uint64_t error_capacity);
  /* Validates serialized attributes and creates a kernel instance. */
  int32_t (*create)(const OpforgeOp* op, const uint8_t* attrs, uint64_t attrs_size, void** instance,
                    char* error, uint64_t error_capacity);
  void (*destroy)(void* instance);
  /* Returns 1 if `tactic` can run these concrete tensors (data pointers unused) and writes its
   * workspace size; 0 if it does not apply; negative on error. */
  int32_t (*query_tactic)(void* instance, int32_t tactic, const OpforgeTensor* inputs,
                          int32_t num_inputs, const OpforgeTensor* outputs, int32_t num_outputs,
                          uint64_t* workspace_size);
  int32_t (*run)(void* instance, const OpforgeKernelArgs* args);
};

typedef struct OpforgeLibrary {
  uint32_t struct_size;
  uint32_t abi_version;
  const char* name;
  const char* version;
  int32_t num_ops;
  const OpforgeOp* ops;
  void (*free_buffer)(OpforgeBuffer* buffer);
  /* Non-NULL when the library could not set itself up (a duplicate op, a malformed combination,
   * tactics for an op it does not define): the engine refuses it with this message. */
  const char* error;
} OpforgeLibrary;

typedef uint32_t (*OpforgeAbiVersionFn)(void);
typedef const OpforgeLibrary* (*OpforgeGetLibraryFn)(uint32_t engine_abi_version);

#define OPFORGE_PLUGIN_ABI_VERSION_SYMBOL "opforge_plugin_abi_version"
#define OPFORGE_PLUGIN_GET_LIBRARY_SYMBOL "opforge_plugin_get_library"

#ifdef __cplusplus
}
#endif

#endif /* OPFORGE_PLUGIN_ABI_H_ */
