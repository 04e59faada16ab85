// Kernels for the com.onyx channels-last operators that the layout pass
// (engine/optimizer/nhwc_layout.h) emits: NhwcConv, NchwToNhwcConv,
// NhwcConvTranspose, NhwcMaxPool, NhwcAveragePool, NhwcGlobalAveragePool,
// NhwcGlobalMaxPool and NhwcChannelShuffle. Their contracts are documented
// in engine/optimizer/README.md.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterNhwcConvKernels(KernelRegistry& registry);            // nhwc_conv.cc
void RegisterNhwcConvTransposeKernels(KernelRegistry& registry);   // nhwc_conv_transpose.cc
void RegisterNhwcPoolKernels(KernelRegistry& registry);            // nhwc_pool.cc
void RegisterNhwcChannelShuffleKernels(KernelRegistry& registry);  // nhwc_channel_shuffle.cc

}  // namespace onyx
