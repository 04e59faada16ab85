// Registration functions of the control-flow family, one per kernel file.
// These kernels run their bodies through OpKernelContext::RunSubgraph, with
// plans compiled at session creation.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterIfKernels(KernelRegistry& registry);    // if.cc
void RegisterLoopKernels(KernelRegistry& registry);  // loop.cc
void RegisterScanKernels(KernelRegistry& registry);  // scan.cc
void RegisterSequenceMapKernels(KernelRegistry& registry);  // sequence_map.cc

}  // namespace onyx
