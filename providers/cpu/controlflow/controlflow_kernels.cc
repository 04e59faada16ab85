#include "providers/cpu/controlflow/controlflow_kernels.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterControlFlowKernels(KernelRegistry& r) {
  RegisterIfKernels(r);
  RegisterLoopKernels(r);
  RegisterScanKernels(r);
  RegisterSequenceMapKernels(r);
}

}  // namespace onyx
