// Operator domains the engine itself defines. Graph passes write nodes of
// these domains and provider kernels register for them, so the names live
// below both.
#pragma once

namespace onyx {

// Fused operators written by the optimizer (FusedConv, FusedMatMul, ...) and
// the Memcpy nodes the partitioner inserts at device boundaries.
inline constexpr char kOnyxDomain[] = "com.onyx";

}  // namespace onyx
