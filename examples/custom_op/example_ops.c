/* An onyx custom-operator library, in plain C against onyx/custom_op.h only.
 * Domain "com.example", opset 1:
 *   ScaledAdd(A, B) -> Y = A + alpha * B      float32, A and B of one shape;
 *                                             attribute alpha (float, required)
 *   Clamp01(X) -> Y = min(max(X, 0), 1)       float32 or float64
 * Build: cc -shared -fPIC -fvisibility=hidden -I<onyx>/engine/include example_ops.c -o libonyx_example_ops.so */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onyx/custom_op.h"

typedef struct {
  float alpha;
} ScaledAddKernel;

static void* ScaledAddCreate(const OnyxCustomOpApi* api, const OnyxKernelInfo* info, char* error, size_t error_size) {
  float alpha = 0;
  if (api->attr_float(info, "alpha", &alpha) != 0) {
    snprintf(error, error_size, "ScaledAdd '%s' needs the float attribute 'alpha'", api->node_name(info));
    return NULL;
  }
  ScaledAddKernel* kernel = (ScaledAddKernel*)malloc(sizeof(ScaledAddKernel));
  if (kernel == NULL) {
    snprintf(error, error_size, "out of memory");
    return NULL;
  }
  kernel->alpha = alpha;
  return kernel;
}

static size_t ElementCount(const OnyxTensorView* t) {
  size_t n = 1;
  for (size_t i = 0; i < t->rank; ++i) n *= (size_t)t->dims[i];
  return n;
}

static int SameShape(const OnyxTensorView* a, const OnyxTensorView* b) {
  if (a->rank != b->rank) return 0;
  for (size_t i = 0; i < a->rank; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

static int ScaledAddCompute(void* state, const OnyxCustomOpApi* api, OnyxKernelContext* ctx, char* error,
                            size_t error_size) {
  const ScaledAddKernel* kernel = (const ScaledAddKernel*)state;
  OnyxTensorView a, b;
  if (api->input(ctx, 0, &a) != 0 || api->input(ctx, 1, &b) != 0) {
    snprintf(error, error_size, "ScaledAdd needs inputs A and B");
    return 1;
  }
  if (a.type != 1 || b.type != 1) {
    snprintf(error, error_size, "ScaledAdd takes float32 (type 1); received types %d and %d", a.type, b.type);
    return 1;
  }
  if (!SameShape(&a, &b)) {
    snprintf(error, error_size,
             "ScaledAdd needs A and B of one shape; received ranks %zu and %zu with %zu and %zu elements", a.rank,
             b.rank, ElementCount(&a), ElementCount(&b));
    return 1;
  }
  void* out = NULL;
  if (api->allocate_output(ctx, 0, 1, a.dims, a.rank, &out, error, error_size) != 0) return 1;
  const float* x = (const float*)a.data;
  const float* y = (const float*)b.data;
  float* z = (float*)out;
  size_t n = ElementCount(&a);
  for (size_t i = 0; i < n; ++i) z[i] = x[i] + kernel->alpha * y[i];
  return 0;
}

static void ScaledAddDestroy(void* state) { free(state); }

static void* Clamp01Create(const OnyxCustomOpApi* api, const OnyxKernelInfo* info, char* error, size_t error_size) {
  (void)api;
  (void)info;
  (void)error;
  (void)error_size;
  static int stateless;
  return &stateless;
}

static int Clamp01Compute(void* state, const OnyxCustomOpApi* api, OnyxKernelContext* ctx, char* error,
                          size_t error_size) {
  (void)state;
  OnyxTensorView x;
  if (api->input(ctx, 0, &x) != 0) {
    snprintf(error, error_size, "Clamp01 needs input X");
    return 1;
  }
  void* out = NULL;
  size_t n = ElementCount(&x);
  if (x.type == 1) {
    if (api->allocate_output(ctx, 0, 1, x.dims, x.rank, &out, error, error_size) != 0) return 1;
    for (size_t i = 0; i < n; ++i) {
      float v = ((const float*)x.data)[i];
      ((float*)out)[i] = v < 0 ? 0 : (v > 1 ? 1 : v);
    }
  } else if (x.type == 11) {
    if (api->allocate_output(ctx, 0, 11, x.dims, x.rank, &out, error, error_size) != 0) return 1;
    for (size_t i = 0; i < n; ++i) {
      double v = ((const double*)x.data)[i];
      ((double*)out)[i] = v < 0 ? 0 : (v > 1 ? 1 : v);
    }
  } else {
    snprintf(error, error_size, "Clamp01 takes float32 or float64; received type %d", x.type);
    return 1;
  }
  return 0;
}

static void Clamp01Destroy(void* state) { (void)state; }

static const OnyxCustomOp kOps[] = {
    {"ScaledAdd", 1, 2, 1, ScaledAddCreate, ScaledAddCompute, ScaledAddDestroy},
    {"Clamp01", 1, 1, 1, Clamp01Create, Clamp01Compute, Clamp01Destroy},
};
static const OnyxCustomOpDomain kDomains[] = {{"com.example", kOps, 2}};

ONYX_EXPORT const OnyxCustomOpLibrary* OnyxCustomOpLibraryEntry(uint32_t host_abi_version) {
  (void)host_abi_version;
  static const OnyxCustomOpLibrary library = {ONYX_CUSTOM_OP_ABI_VERSION, "example_ops", kDomains, 1};
  return &library;
}
