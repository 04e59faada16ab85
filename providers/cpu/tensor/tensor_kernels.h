// Registration functions of the tensor family, one per kernel file.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterCastKernels(KernelRegistry& registry);              // cast.cc
void RegisterCenterCropPadKernels(KernelRegistry& registry);     // center_crop_pad.cc
void RegisterCol2ImKernels(KernelRegistry& registry);            // col2im.cc
void RegisterConcatSplitKernels(KernelRegistry& registry);       // concat_split.cc
void RegisterConstantKernels(KernelRegistry& registry);          // constant.cc
void RegisterExpandTileKernels(KernelRegistry& registry);        // expand_tile.cc
void RegisterGatherKernels(KernelRegistry& registry);            // gather.cc
void RegisterOneHotKernels(KernelRegistry& registry);            // onehot.cc
void RegisterPadKernels(KernelRegistry& registry);               // pad.cc
void RegisterQuantizeKernels(KernelRegistry& registry);          // quantize.cc
void RegisterRandomKernels(KernelRegistry& registry);            // random.cc
void RegisterRegexFullMatchKernels(KernelRegistry& registry);    // regex_full_match.cc
void RegisterReshapeKernels(KernelRegistry& registry);           // reshape.cc
void RegisterResizeKernels(KernelRegistry& registry);            // resize.cc
void RegisterReverseSequenceKernels(KernelRegistry& registry);   // reverse_sequence.cc
void RegisterScatterKernels(KernelRegistry& registry);           // scatter.cc
void RegisterSequenceKernels(KernelRegistry& registry);          // sequence.cc
void RegisterSliceKernels(KernelRegistry& registry);             // slice.cc
void RegisterStringNormalizerKernels(KernelRegistry& registry);  // string_normalizer.cc
void RegisterStringOpsKernels(KernelRegistry& registry);         // string_ops.cc
void RegisterTfIdfVectorizerKernels(KernelRegistry& registry);   // tfidf_vectorizer.cc
void RegisterTopKKernels(KernelRegistry& registry);              // topk.cc
void RegisterTransposeKernels(KernelRegistry& registry);         // transpose.cc
void RegisterTriluKernels(KernelRegistry& registry);             // trilu.cc
void RegisterUniqueKernels(KernelRegistry& registry);            // unique.cc
void RegisterWhereKernels(KernelRegistry& registry);             // where.cc

}  // namespace onyx
