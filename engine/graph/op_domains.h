// Operator domains the engine itself defines. Graph passes write nodes of
// these domains and provider kernels register for them, so the names live
// below both.
#pragma once

namespace onyx {

// Fused operators written by the optimizer (FusedConv, FusedMatMul, ...) and
// the Memcpy nodes the partitioner inserts at device boundaries.
inline constexpr char kOnyxDomain[] = "com.onyx";

// ONNX Runtime's contrib operators (Attention, SkipLayerNormalization,
// QLinearAdd, ...), which its transformer optimizer and quantizer write into
// models; their schemas live in graph/schemas/contrib_*.cc and their CPU
// kernels in providers/cpu/contrib.
inline constexpr char kMicrosoftDomain[] = "com.microsoft";

}  // namespace onyx
