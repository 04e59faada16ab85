// What Attention (attention.cc) and MultiHeadAttention
// (multi_head_attention.cc) share around the attention core: the key/value
// attributes, the key/value state concatenation, the mask and attention-bias
// inputs, and the output.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "framework/op_kernel.h"
#include "providers/cpu/contrib/attention_core.h"

namespace onyx {

// num_heads, unidirectional, mask_filter_value and scale, with ONNX Runtime's
// defaults (0, 0, -10000, 0 meaning 1 / sqrt(head size)).
struct AttentionAttributes {
  explicit AttentionAttributes(const OpKernelInfo& info);

  // A problem with the geometry set and the scale resolved; views unset.
  AttentionProblem Problem(int64_t batch, int64_t q_len, int64_t kv_len, int64_t qk_head, int64_t v_head) const;

  int64_t heads;
  bool unidirectional;
  float mask_filter_value;
  float scale;
};

// dst[b, n] = [past[b, n]; src[b, n]] as a dense [B, N, past_len + len, head]
// tensor, where past is dense [B, N, past_len, head] (nullptr when past_len
// is 0) and src a [B, N, len, head] view.
void ConcatHeads(const float* past, const HeadView& src, int64_t batch, int64_t heads, int64_t past_len, int64_t len,
                 int64_t head, float* dst);

// Reads the int32 mask (input `mask_input`, may be omitted) and the float
// attention bias (input `bias_input`, (B or 1, N or 1, S, T)) of a node and
// sets p.mask (built into `mask_storage`, with the causal part when
// `unidirectional`) and p.attention_bias. p's geometry must be set. Errors
// name the node, the input and the accepted shapes.
absl::Status SetMaskAndBias(const OpKernelContext& ctx, int mask_input, int bias_input, bool unidirectional,
                            float filter, int64_t past_len, bool allow_4d, AttentionProblem& p,
                            std::vector<float>& mask_storage);

// Allocates output 0 as (B, S, N * H_v), points p.out at it (and
// p.scores_out at output `scores_output` when that index is >= 0 and the
// output is requested), and runs `core`; errors name the node.
absl::Status RunAttention(OpKernelContext& ctx, const AttentionCore& core, int scores_output, AttentionProblem& p);

}  // namespace onyx
