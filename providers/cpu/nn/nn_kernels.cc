#include "providers/cpu/nn/nn_kernels.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterNnKernels(KernelRegistry& r) {
  RegisterAffineGridKernels(r);
  RegisterConvKernels(r);
  RegisterConvIntegerKernels(r);
  RegisterConvTransposeKernels(r);
  RegisterDeformConvKernels(r);
  RegisterDepthToSpaceKernels(r);
  RegisterDropoutKernels(r);
  RegisterGridSampleKernels(r);
  RegisterGroupNormKernels(r);
  RegisterGruKernels(r);
  RegisterImageScalerKernels(r);
  RegisterLocalNormKernels(r);
  RegisterLossKernels(r);
  RegisterLstmKernels(r);
  RegisterMaxUnpoolKernels(r);
  RegisterNonMaxSuppressionKernels(r);
  RegisterNormalizationKernels(r);
  RegisterPoolKernels(r);
  RegisterRnnKernels(r);
  RegisterRoiAlignKernels(r);
}

}  // namespace onyx
