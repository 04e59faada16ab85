// Registration functions of the nn family, one per kernel file.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterAffineGridKernels(KernelRegistry& registry);         // affine_grid.cc
void RegisterConvKernels(KernelRegistry& registry);               // conv.cc
void RegisterConvIntegerKernels(KernelRegistry& registry);        // conv_integer.cc
void RegisterConvTransposeKernels(KernelRegistry& registry);      // conv_transpose.cc
void RegisterDeformConvKernels(KernelRegistry& registry);         // deform_conv.cc
void RegisterDepthToSpaceKernels(KernelRegistry& registry);       // depth_to_space.cc
void RegisterDropoutKernels(KernelRegistry& registry);            // dropout.cc
void RegisterGridSampleKernels(KernelRegistry& registry);         // grid_sample.cc
void RegisterGroupNormKernels(KernelRegistry& registry);          // group_norm.cc
void RegisterGruKernels(KernelRegistry& registry);                // gru.cc
void RegisterImageScalerKernels(KernelRegistry& registry);        // image_scaler.cc
void RegisterLocalNormKernels(KernelRegistry& registry);          // local_norm.cc
void RegisterLossKernels(KernelRegistry& registry);               // loss.cc
void RegisterLstmKernels(KernelRegistry& registry);               // lstm.cc
void RegisterMaxUnpoolKernels(KernelRegistry& registry);          // max_unpool.cc
void RegisterNonMaxSuppressionKernels(KernelRegistry& registry);  // non_max_suppression.cc
void RegisterNormalizationKernels(KernelRegistry& registry);      // normalization.cc
void RegisterPoolKernels(KernelRegistry& registry);               // pool.cc
void RegisterRnnKernels(KernelRegistry& registry);                // rnn.cc
void RegisterRoiAlignKernels(KernelRegistry& registry);           // roi_align.cc

}  // namespace onyx
