#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterTensorKernels(KernelRegistry& r) {
  RegisterCastKernels(r);
  RegisterCenterCropPadKernels(r);
  RegisterCol2ImKernels(r);
  RegisterConcatSplitKernels(r);
  RegisterConstantKernels(r);
  RegisterExpandTileKernels(r);
  RegisterGatherKernels(r);
  RegisterOneHotKernels(r);
  RegisterPadKernels(r);
  RegisterQuantizeKernels(r);
  RegisterRandomKernels(r);
  RegisterRegexFullMatchKernels(r);
  RegisterReshapeKernels(r);
  RegisterResizeKernels(r);
  RegisterReverseSequenceKernels(r);
  RegisterScatterKernels(r);
  RegisterSequenceKernels(r);
  RegisterSliceKernels(r);
  RegisterStringNormalizerKernels(r);
  RegisterStringOpsKernels(r);
  RegisterTfIdfVectorizerKernels(r);
  RegisterTopKKernels(r);
  RegisterTransposeKernels(r);
  RegisterTriluKernels(r);
  RegisterUniqueKernels(r);
  RegisterWhereKernels(r);
}

}  // namespace onyx
