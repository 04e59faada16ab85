/* Custom-operator libraries: kernels for ops of a custom domain, in a shared
 * library onyx loads by path (SessionOptions::custom_op_libraries, the model
 * config key custom_op_libraries, `onyx run/inspect --custom-op-library`).
 * Plain C, so a library may be built by any compiler against this header only.
 *
 *   static int Compute(void* kernel, const OnyxCustomOpApi* api, OnyxKernelContext* ctx,
 *                      char* error, size_t error_size) {
 *     OnyxTensorView x;
 *     if (api->input(ctx, 0, &x) != 0) { snprintf(error, error_size, "input 0 missing"); return 1; }
 *     void* y;
 *     if (api->allocate_output(ctx, 0, x.type, x.dims, x.rank, &y, error, error_size) != 0) return 1;
 *     ...
 *     return 0;
 *   }
 *   static const OnyxCustomOp kOps[] = {{"MyOp", 1, 1, 1, Create, Compute, Destroy}};
 *   static const OnyxCustomOpDomain kDomains[] = {{"com.example", kOps, 1}};
 *   ONYX_EXPORT const OnyxCustomOpLibrary* OnyxCustomOpLibraryEntry(uint32_t host_abi_version) {
 *     static const OnyxCustomOpLibrary library = {ONYX_CUSTOM_OP_ABI_VERSION, "example", kDomains, 1};
 *     return &library;
 *   }
 *
 * The entry point is called once, when the library is first loaded, with the
 * host's ABI version; onyx refuses a library whose abi_version differs. The
 * returned tables must stay valid until the process exits (libraries are never
 * unloaded). Kernels are created once per node when a session is created and
 * destroyed with the session; compute may be called from several threads at
 * once for one kernel. A nonzero return means failure: the library writes a
 * NUL-terminated message into `error` (at most error_size bytes), which onyx
 * reports with the model and node named; the run fails, nothing else does.
 * Tensors are dense, row-major, in host memory; element types are ONNX's
 * TensorProto data type numbers (1 float, 6 int32, 7 int64, 9 bool, 10
 * float16, 11 double, ...; strings are not supported). */
#ifndef ONYX_CUSTOM_OP_H_
#define ONYX_CUSTOM_OP_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a struct below or the meaning of a field changes. */
#define ONYX_CUSTOM_OP_ABI_VERSION 1u
#define ONYX_CUSTOM_OP_ENTRY_SYMBOL "OnyxCustomOpLibraryEntry"

#if defined(__GNUC__)
#define ONYX_EXPORT __attribute__((visibility("default")))
#else
#define ONYX_EXPORT
#endif

typedef struct OnyxKernelInfo OnyxKernelInfo;       /* valid during create only */
typedef struct OnyxKernelContext OnyxKernelContext; /* valid during compute only */

typedef struct OnyxTensorView {
  int32_t type; /* ONNX TensorProto data type */
  size_t rank;
  const int64_t* dims; /* rank entries */
  const void* data;    /* dims' product elements */
} OnyxTensorView;

/* What onyx offers a kernel. Functions returning int return 0 on success. */
typedef struct OnyxCustomOpApi {
  uint32_t abi_version;
  /* At creation: the node's name, its input and output counts, the element
   * type of an input or output (0 when unknown before the run), and its
   * attributes. An attribute call returns nonzero when the attribute is absent
   * or of another kind; arrays and strings stay valid during create. */
  const char* (*node_name)(const OnyxKernelInfo* info);
  int (*info_input_count)(const OnyxKernelInfo* info);
  int (*info_output_count)(const OnyxKernelInfo* info);
  int32_t (*info_input_type)(const OnyxKernelInfo* info, int index);
  int32_t (*info_output_type)(const OnyxKernelInfo* info, int index);
  int (*attr_int)(const OnyxKernelInfo* info, const char* name, int64_t* value);
  int (*attr_float)(const OnyxKernelInfo* info, const char* name, float* value);
  int (*attr_string)(const OnyxKernelInfo* info, const char* name, const char** value, size_t* length);
  int (*attr_ints)(const OnyxKernelInfo* info, const char* name, const int64_t** values, size_t* count);
  int (*attr_floats)(const OnyxKernelInfo* info, const char* name, const float** values, size_t* count);
  /* During compute: the inputs present (an omitted optional input returns
   * nonzero), and output allocation (zero-filled host memory owned by onyx).
   * allocate_output writes its own message into `error` when it fails (a bad
   * index or type, a negative dim, the arena's cap). */
  int (*input_count)(const OnyxKernelContext* ctx);
  int (*output_count)(const OnyxKernelContext* ctx);
  int (*input)(const OnyxKernelContext* ctx, int index, OnyxTensorView* view);
  int (*allocate_output)(OnyxKernelContext* ctx, int index, int32_t type, const int64_t* dims, size_t rank, void** data,
                         char* error, size_t error_size);
} OnyxCustomOpApi;

typedef struct OnyxCustomOp {
  const char* op_type;
  int32_t since_version; /* the domain's opset version it implements from */
  int32_t input_count;   /* inputs the node must have at most; -1 any */
  int32_t output_count;  /* outputs the node must have at most; -1 any */
  /* Returns the kernel's state (non-NULL) or NULL with a message in `error`. */
  void* (*create)(const OnyxCustomOpApi* api, const OnyxKernelInfo* info, char* error, size_t error_size);
  int (*compute)(void* kernel, const OnyxCustomOpApi* api, OnyxKernelContext* ctx, char* error, size_t error_size);
  void (*destroy)(void* kernel);
} OnyxCustomOp;

typedef struct OnyxCustomOpDomain {
  const char* domain; /* e.g. "com.example"; never "" or "ai.onnx" */
  const OnyxCustomOp* ops;
  size_t op_count;
} OnyxCustomOpDomain;

typedef struct OnyxCustomOpLibrary {
  uint32_t abi_version; /* ONYX_CUSTOM_OP_ABI_VERSION of the library's build */
  const char* name;     /* for messages */
  const OnyxCustomOpDomain* domains;
  size_t domain_count;
} OnyxCustomOpLibrary;

/* The one symbol a library exports. */
typedef const OnyxCustomOpLibrary* (*OnyxCustomOpLibraryEntryFn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* ONYX_CUSTOM_OP_H_ */
