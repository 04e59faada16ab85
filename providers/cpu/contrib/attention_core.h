// Scaled dot-product attention over all batches and heads at once, the
// computation Attention and MultiHeadAttention share (ONNX Runtime's
// AttentionCPUBase::ApplyAttention):
//
//   scores[b, n] = scale * Q[b, n] x K[b, n]' + (attention_bias + mask)
//   probs[b, n]  = softmax(scores[b, n]) along the keys
//   out[b, n]    = probs[b, n] x V[b, n]
//
// Q, K, V and the output are strided views ([b, n, row, column] addressed by
// three strides and a unit column stride), so heads are read straight out of
// a projected [B, S, 3, N, H] buffer and written straight into [B, S, N * H]
// without transposes. The two products are oneDNN batched matmul primitives
// over all B * N heads; the scale is the first product's output scale and the
// bias and mask enter through its sum post-op (so they are added exactly as
// ONNX Runtime adds them); the softmax is oneDNN's, in place, over all rows.
// Primitives are compiled per geometry and cached (kMaxCompiled).
//
//   AttentionProblem p = ...;
//   RETURN_IF_ERROR(core.Run(p));
//
// Thread-safe: Run may be called concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace onyx {

// A [batch, heads, rows, columns] float view: element (b, n, r, c) at
// data[b * strides[0] + n * strides[1] + r * strides[2] + c].
struct HeadView {
  const float* data = nullptr;
  std::array<int64_t, 3> strides{};
};

struct AttentionProblem {
  int64_t batch = 0, heads = 0;
  int64_t q_len = 0;    // S
  int64_t kv_len = 0;   // T (past included)
  int64_t qk_head = 0;  // H
  int64_t v_head = 0;   // H_v
  float scale = 1.f;
  HeadView q, k, v;  // [B, N, S, H], [B, N, T, H], [B, N, T, H_v]
  // Added to the scaled scores, or nullptr: the mask as [B, S, T] (the same
  // for every head), and the attention bias as [B or 1, N or 1, S, T].
  const float* mask = nullptr;
  const float* attention_bias = nullptr;
  bool bias_per_batch = false, bias_per_head = false;
  // The output [B, N, S, H_v] view (written), and optionally the scores
  // before the softmax as a dense [B, N, S, T] tensor.
  float* out = nullptr;
  std::array<int64_t, 3> out_strides{};
  float* scores_out = nullptr;
};

class AttentionCore {
 public:
  static constexpr size_t kMaxCompiled = 32;

  AttentionCore();
  ~AttentionCore();

  // INTERNAL / UNIMPLEMENTED when oneDNN fails; the problem must be
  // consistent (callers validate shapes).
  absl::Status Run(const AttentionProblem& p) const;

  struct Compiled;

 private:
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(const AttentionProblem& p) const;

  mutable absl::Mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
};

// ONNX Runtime's mask forms turned into an additive [B, S, T] mask: 0 where a
// query may attend a key, `filter` where it may not, and the lowest float
// where the causal mask forbids it (keys after P + s for query s, when
// `causal` and S > 1). `mask_index` may be nullptr (only the causal part), or:
//   1-D (B): per batch, keys at or after the end position are masked;
//   1-D (2B): also keys before min(start, T), the start positions following;
//   1-D (3B + 2): the first B values as end positions;
//   2-D (B, T), 3-D (B, S, T): 0/1 per key (per query and key);
//   4-D (B, 1, M, M), M >= T, when `allow_4d`: 0/1 with query s at row P + s
//     (Megatron-style, which ONNX Runtime runs on CUDA only).
// Returns an empty vector when nothing is masked; INVALID_ARGUMENT naming the
// accepted shapes otherwise.
absl::StatusOr<std::vector<float>> BuildAttentionMask(const int32_t* mask_index, const std::vector<int64_t>& dims,
                                                      bool causal, int64_t batch, int64_t q_len, int64_t past_len,
                                                      int64_t kv_len, float filter, bool allow_4d);

}  // namespace onyx
