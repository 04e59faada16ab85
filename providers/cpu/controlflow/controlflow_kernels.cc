#include "providers/cpu/kernel_tables.h"

namespace onyx {

// If, Loop and Scan register here once subgraph execution lands.
void RegisterControlFlowKernels(KernelRegistry& r) {}

}  // namespace onyx
