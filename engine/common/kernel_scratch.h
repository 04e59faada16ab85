// Scratch memory for kernels that need a temporary buffer during one Compute
// (im2col matrices, packed operands): per thread and per slot, grown to the
// largest size asked for and kept for the thread's life, so that once warm a
// run allocates nothing. A fresh allocation of a few MB per run costs its page
// faults every time (glibc returns large blocks to the kernel on free).
//
//   float* col = KernelScratch<float>(kScratchIm2Col, rows * cols);
//
// The contents are unspecified; the pointer is valid until the next call with
// the same slot on the same thread. A kernel that needs two buffers at once
// uses two slots.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onyx {

enum ScratchSlot : int {
  kScratchIm2Col = 0,
  kScratchConvSource,         // an input reordered into a primitive's layout
  kScratchConvResult,         // a primitive's output before its reorder back
  kScratchPrimitive,          // a oneDNN primitive's own scratchpad
  kScratchAccumulator,        // an integer kernel's int32 result before requantization
  kScratchAttentionOperands,  // Attention's Q, K, V and Y in head-major float
  kScratchAttentionScores,    // Attention's score rows
  kScratchRecurrentInput,     // a recurrent layer's input projection for every time step
  kScratchStemRows,           // a stem convolution's rows under its max pool's window
  kScratchPointwiseChunk,     // a pointwise convolution's chunk of pixels before its residual sum
  kScratchSlots
};

// `bytes` bytes of slot `slot` of the calling thread, 64-byte aligned; never
// null for 0 bytes, null only when the allocation fails.
void* KernelScratchBytes(ScratchSlot slot, size_t bytes);

template <typename T>
T* KernelScratch(ScratchSlot slot, int64_t count) {
  return static_cast<T*>(KernelScratchBytes(slot, static_cast<size_t>(count) * sizeof(T)));
}

// Bytes held by the calling thread's scratch slots (for tests).
size_t KernelScratchHeldBytes();

}  // namespace onyx
