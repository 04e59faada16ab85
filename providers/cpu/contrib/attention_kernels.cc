#include "providers/cpu/contrib/attention_kernels.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"

namespace onyx {

AttentionAttributes::AttentionAttributes(const OpKernelInfo& info)
    : heads(info.AttrOr<int64_t>("num_heads", 0)),
      unidirectional(info.AttrOr<int64_t>("unidirectional", 0) != 0),
      mask_filter_value(info.AttrOr<float>("mask_filter_value", -10000.f)),
      scale(info.AttrOr<float>("scale", 0.f)) {}

AttentionProblem AttentionAttributes::Problem(int64_t batch, int64_t q_len, int64_t kv_len, int64_t qk_head,
                                              int64_t v_head) const {
  AttentionProblem p;
  p.batch = batch;
  p.heads = heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.qk_head = qk_head;
  p.v_head = v_head;
  p.scale = scale != 0.f ? scale : 1.f / std::sqrt(static_cast<float>(qk_head));
  return p;
}

absl::Status RunAttention(OpKernelContext& ctx, const AttentionCore& core, int scores_output, AttentionProblem& p) {
  const int64_t v_hidden = p.heads * p.v_head;
  ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {p.batch, p.q_len, v_hidden}, DataType::kFloat));
  p.out = y->mutable_data<float>();
  p.out_strides = {p.q_len * v_hidden, p.v_head, v_hidden};
  if (scores_output >= 0 && ctx.OutputCount() > scores_output && ctx.OutputRequested(scores_output)) {
    ASSIGN_OR_RETURN(Tensor* scores, ctx.Output(scores_output, {p.batch, p.heads, p.q_len, p.kv_len}, DataType::kFloat));
    p.scores_out = scores->mutable_data<float>();
  }
  absl::Status status = core.Run(p);
  return status.ok() ? status : ctx.Error(status.message());
}

void ConcatHeads(const float* past, const HeadView& src, int64_t batch, int64_t heads, int64_t past_len, int64_t len,
                 int64_t head, float* dst) {
  const int64_t total = past_len + len;
  ParallelFor(batch * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bn = begin; bn < end; ++bn) {
      const int64_t b = bn / heads, n = bn % heads;
      float* out = dst + bn * total * head;
      if (past_len > 0) std::copy(past + bn * past_len * head, past + (bn + 1) * past_len * head, out);
      out += past_len * head;
      const float* in = src.data + b * src.strides[0] + n * src.strides[1];
      for (int64_t r = 0; r < len; ++r)
        std::copy(in + r * src.strides[2], in + r * src.strides[2] + head, out + r * head);
    }
  });
}

absl::Status SetMaskAndBias(const OpKernelContext& ctx, int mask_input, int bias_input, bool unidirectional,
                            float filter, int64_t past_len, bool allow_4d, AttentionProblem& p,
                            std::vector<float>& mask_storage) {
  const Tensor* mask = mask_input < ctx.InputCount() ? ctx.Input(mask_input) : nullptr;
  if (mask != nullptr && mask->type() != DataType::kInt32) {
    return ctx.Error(
        absl::StrCat("input ", mask_input, " (the mask) must be int32, received ", DataTypeName(mask->type())));
  }
  const std::vector<int64_t> dims =
      mask ? std::vector<int64_t>(mask->dims().begin(), mask->dims().end()) : std::vector<int64_t>();
  auto built = BuildAttentionMask(mask ? mask->data<int32_t>() : nullptr, dims, unidirectional, p.batch, p.q_len,
                                  past_len, p.kv_len, filter, allow_4d);
  if (!built.ok()) return ctx.Error(built.status().message());
  mask_storage = *std::move(built);
  p.mask = mask_storage.empty() ? nullptr : mask_storage.data();

  const Tensor* bias = bias_input < ctx.InputCount() ? ctx.Input(bias_input) : nullptr;
  if (bias == nullptr) return absl::OkStatus();
  const Dims& d = bias->dims();
  if (bias->type() != DataType::kFloat || d.size() != 4 || (d[0] != 1 && d[0] != p.batch) ||
      (d[1] != 1 && d[1] != p.heads) || d[2] != p.q_len || d[3] != p.kv_len) {
    return ctx.Error(absl::StrCat("attention_bias must be float (", p.batch, " or 1, ", p.heads, " or 1, ", p.q_len,
                                  ", ", p.kv_len, "), received ", DataTypeName(bias->type()), " ", DimsToString(d)));
  }
  p.attention_bias = bias->data<float>();
  p.bias_per_batch = d[0] != 1;
  p.bias_per_head = d[1] != 1;
  return absl::OkStatus();
}

}  // namespace onyx
