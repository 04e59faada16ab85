// com.microsoft MultiHeadAttention(query, key, value, bias?, key_padding_mask?,
// attention_bias?, past_key?, past_value?), float: attention over projected
// Q, K and V (attention_core.h).
//
//   query (B, S, D); key (B, L, D) and value (B, L, D_v), plus bias
//   (D + D + D_v) added to each; or key and value already per head
//   (B, N, L, H) and (B, N, L, H_v), where only query takes its bias.
//   past_key / past_value (B, N, P, H) precede the new keys and values;
//   present_key / present_value (B, N, P + L, H) return them.
//   Output (B, S, D_v); qk (B, N, S, P + L), the scores before the softmax.
//
// As on ONNX Runtime's CPU, packed QKV (a 5-D query) and packed KV (a 5-D
// key) are refused.

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/attention_core.h"
#include "providers/cpu/contrib/attention_kernels.h"
#include "providers/cpu/contrib/contrib_kernels.h"

namespace onyx {

namespace {

// x + bias (along the last dimension) as a new tensor, or x when no bias.
Tensor AddBias(const Tensor& x, const float* bias, int64_t width) {
  if (bias == nullptr) return x;
  Tensor out = Tensor::Allocate(DataType::kFloat, x.dims());
  const float* px = x.data<float>();
  float* po = out.mutable_data<float>();
  const int64_t rows = width == 0 ? 0 : x.num_elements() / width;
  ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t i = 0; i < width; ++i) po[r * width + i] = px[r * width + i] + bias[i];
    }
  });
  return out;
}

class MultiHeadAttention final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<MultiHeadAttention>(new MultiHeadAttention(info));
    if (kernel->attrs_.heads <= 0) return info.Error("num_heads must be positive");
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* query, FloatInput(ctx, 0, "query"));
    if (query->rank() == 5) return ctx.Error("packed QKV (a 5-D query) is not supported on CPU (nor by ONNX Runtime)");
    const Tensor* key_in = ctx.Input(1);
    if (key_in != nullptr && key_in->rank() == 5) {
      return ctx.Error("packed KV (a 5-D key) is not supported on CPU (nor by ONNX Runtime)");
    }
    if (query->rank() != 3) return ctx.Error("query must be (B, S, hidden), received " + DimsToString(query->dims()));
    ASSIGN_OR_RETURN(const Tensor* key, FloatInput(ctx, 1, "key"));
    ASSIGN_OR_RETURN(const Tensor* value, FloatInput(ctx, 2, "value"));
    const int64_t batch = query->dims()[0], seq = query->dims()[1], hidden = query->dims()[2];
    if (hidden % attrs_.heads != 0)
      return ctx.Error(absl::StrCat("query's hidden size ", hidden, " is not a multiple of num_heads ", attrs_.heads));
    const int64_t head = hidden / attrs_.heads;
    const bool per_head = key->rank() == 4;  // key and value already (B, N, L, H)
    int64_t kv_len, v_head;
    if (per_head) {
      if (key->dims() != Dims{batch, attrs_.heads, key->dims()[2], head} || value->rank() != 4 ||
          value->dims()[0] != batch || value->dims()[1] != attrs_.heads || value->dims()[2] != key->dims()[2]) {
        return ctx.Error(absl::StrCat("per-head key and value must be (", batch, ", ", attrs_.heads, ", L, ", head,
                                      ") and (", batch, ", ", attrs_.heads, ", L, H_v); received ",
                                      DimsToString(key->dims()), " and ", DimsToString(value->dims())));
      }
      kv_len = key->dims()[2];
      v_head = value->dims()[3];
    } else {
      if (key->rank() != 3 || key->dims() != Dims{batch, key->dims()[1], hidden} || value->rank() != 3 ||
          value->dims()[0] != batch || value->dims()[1] != key->dims()[1] || value->dims()[2] % attrs_.heads != 0) {
        return ctx.Error(absl::StrCat("key and value must be (", batch, ", L, ", hidden, ") and (", batch,
                                      ", L, v_hidden) with v_hidden a multiple of num_heads; received ",
                                      DimsToString(key->dims()), " and ", DimsToString(value->dims())));
      }
      kv_len = key->dims()[1];
      v_head = value->dims()[2] / attrs_.heads;
    }
    const int64_t v_hidden = v_head * attrs_.heads;
    const Tensor* bias = nullptr;
    if (ctx.Input(3) != nullptr) {
      ASSIGN_OR_RETURN(bias, FloatInput(ctx, 3, "bias"));
      RETURN_IF_ERROR(RequireVector(ctx, *bias, "bias", 2 * hidden + v_hidden));
    }
    const float* pbias = bias ? bias->data<float>() : nullptr;
    const Tensor q = AddBias(*query, pbias, hidden);
    const Tensor k = per_head ? *key : AddBias(*key, pbias ? pbias + hidden : nullptr, hidden);
    const Tensor v = per_head ? *value : AddBias(*value, pbias ? pbias + 2 * hidden : nullptr, v_hidden);

    const Tensor* past_k = ctx.Input(6);
    const Tensor* past_v = ctx.Input(7);
    int64_t past_len = 0;
    if ((past_k == nullptr) != (past_v == nullptr)) return ctx.Error("past_key and past_value go together");
    if (past_k != nullptr) {
      if (per_head) return ctx.Error("past_key and past_value cannot be combined with per-head key and value");
      past_len = past_k->rank() == 4 ? past_k->dims()[2] : -1;
      if (past_k->type() != DataType::kFloat || past_v->type() != DataType::kFloat ||
          past_k->dims() != Dims{batch, attrs_.heads, past_len, head} ||
          past_v->dims() != Dims{batch, attrs_.heads, past_len, v_head}) {
        return ctx.Error(absl::StrCat("past_key and past_value must be float (", batch, ", ", attrs_.heads, ", P, ",
                                      head, ") and (", batch, ", ", attrs_.heads, ", P, ", v_head, "), received ",
                                      DimsToString(past_k->dims()), " and ", DimsToString(past_v->dims())));
      }
    }
    const int64_t total = past_len + kv_len;
    AttentionProblem p = attrs_.Problem(batch, seq, total, head, v_head);
    p.q = {q.data<float>(), {seq * hidden, head, hidden}};
    if (per_head) {
      p.k = {k.data<float>(), {attrs_.heads * kv_len * head, kv_len * head, head}};
      p.v = {v.data<float>(), {attrs_.heads * kv_len * v_head, kv_len * v_head, v_head}};
    } else {
      p.k = {k.data<float>(), {kv_len * hidden, head, hidden}};
      p.v = {v.data<float>(), {kv_len * v_hidden, v_head, v_hidden}};
    }

    // Present key and value (or scratch when only the past is given).
    const bool want_k = ctx.OutputCount() > 1 && ctx.OutputRequested(1);
    const bool want_v = ctx.OutputCount() > 2 && ctx.OutputRequested(2);
    Tensor k_state, v_state;
    if (past_k != nullptr || want_k || want_v) {
      RETURN_IF_ERROR(State(ctx, 1, want_k, {batch, attrs_.heads, total, head}, k_state));
      RETURN_IF_ERROR(State(ctx, 2, want_v, {batch, attrs_.heads, total, v_head}, v_state));
      ConcatHeads(past_k ? past_k->data<float>() : nullptr, p.k, batch, attrs_.heads, past_len, kv_len, head,
                  k_state.mutable_data<float>());
      ConcatHeads(past_v ? past_v->data<float>() : nullptr, p.v, batch, attrs_.heads, past_len, kv_len, v_head,
                  v_state.mutable_data<float>());
      p.k = {k_state.data<float>(), {attrs_.heads * total * head, total * head, head}};
      p.v = {v_state.data<float>(), {attrs_.heads * total * v_head, total * v_head, v_head}};
    }
    std::vector<float> mask;
    RETURN_IF_ERROR(SetMaskAndBias(ctx, 4, 5, attrs_.unidirectional, attrs_.mask_filter_value, past_len,
                                   /*allow_4d=*/false, p, mask));
    return RunAttention(ctx, core_, 3, p);
  }

 private:
  explicit MultiHeadAttention(const OpKernelInfo& info) : attrs_(info) {}

  // Output `index` when requested, else a scratch tensor of the same shape.
  static absl::Status State(OpKernelContext& ctx, int index, bool requested, const Dims& dims, Tensor& out) {
    if (requested) {
      ASSIGN_OR_RETURN(Tensor* t, ctx.Output(index, dims, DataType::kFloat));
      out = *t;
    } else {
      out = Tensor::Allocate(DataType::kFloat, dims);
    }
    return absl::OkStatus();
  }

  AttentionAttributes attrs_;
  AttentionCore core_;
};

}  // namespace

void RegisterMultiHeadAttentionKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("MultiHeadAttention"), MakeFactory<MultiHeadAttention>());
}

}  // namespace onyx
