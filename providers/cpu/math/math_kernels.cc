#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterMathKernels(KernelRegistry& r) {
  RegisterActivationKernels(r);
  RegisterBinaryKernels(r);
  RegisterBitwiseKernels(r);
  RegisterCompareKernels(r);
  RegisterCumSumKernels(r);
  RegisterDetKernels(r);
  RegisterEinsumKernels(r);
  RegisterElementwiseKernels(r);
  RegisterGelu20Kernels(r);
  RegisterGemmKernels(r);
  RegisterMatMulKernels(r);
  RegisterQuantMatMulKernels(r);
  RegisterReduceKernels(r);
  RegisterSignalKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterUnaryKernels(r);
  RegisterVariadicKernels(r);
}

}  // namespace onyx
