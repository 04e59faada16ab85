// The attributes and input geometry of Attention (opset 23), read and checked
// before any computation. 4-D inputs carry their heads ([B, H, L, D]); 3-D
// inputs ([B, L, H * D]) take them from q_num_heads / kv_num_heads.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"

namespace onyx {

struct AttentionAttrs {
  bool is_causal = false;
  int64_t q_num_heads = 0, kv_num_heads = 0;  // 0: absent
  bool has_scale = false;
  float scale = 0.f;
  float softcap = 0.f;
  int64_t qk_mode = 0;
};

struct AttentionShape {
  bool three_d = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_seq = 0, kv_seq = 0, past = 0, total = 0;  // total = past + kv_seq
  int64_t head = 0, v_head = 0;                        // head sizes of Q/K and of V
};

// Reads inputs 0-2 (Q, K, V) and 4-5 (past_key, past_value) of `ctx`.
// INVALID_ARGUMENT naming the input and the expected shape when ranks, batch,
// heads or head sizes disagree, when q_heads is not a multiple of kv_heads,
// or when only one of past_key / past_value is given.
absl::StatusOr<AttentionShape> ReadAttentionShape(const OpKernelContext& ctx, const AttentionAttrs& attrs);

}  // namespace onyx
