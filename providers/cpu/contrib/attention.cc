// com.microsoft Attention(input, weights, bias?, mask_index?, past?,
// attention_bias?), float: BERT's and GPT-2's self-attention with the Q/K/V
// projection merged.
//
//   [Q K V] = input x weights + bias      (hidden, hidden, v_hidden columns)
//   K, V    = [past K; K], [past V; V]     with past (2, B, N, P, H)
//   output  = attention over N heads (attention_core.h), (B, S, v_hidden)
//   present = (2, B, N, P + S, H)
//
// The projection is one product over all B * S rows (oneDNN's matmul with the
// weights packed once when they are constant); the attention itself reads the
// heads out of the projected rows in place. mask_index takes every form
// BuildAttentionMask lists, the 4-D Megatron form included; unidirectional
// adds the causal mask. do_rotary and past_present_share_buffer are refused as
// ONNX Runtime's CPU kernel refuses them.

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/attention_core.h"
#include "providers/cpu/contrib/attention_kernels.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/math/dnnl_matmul.h"
#include "providers/cpu/math/gemm_util.h"

namespace onyx {
namespace {

class Attention final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<Attention>(new Attention(info));
    if (kernel->attrs_.heads <= 0) return info.Error("num_heads must be positive");
    if (info.AttrOr<int64_t>("do_rotary", 0) != 0) {
      return info.Error(
          "do_rotary is not supported (ONNX Runtime's CPU kernel refuses it too: fuse the model "
          "with MultiHeadAttention + RotaryEmbedding)");
    }
    if (info.AttrOr<int64_t>("past_present_share_buffer", 0) != 0) {
      return info.Error("past_present_share_buffer is not supported on CPU");
    }
    const std::vector<int64_t> sizes = info.AttrOr<std::vector<int64_t>>("qkv_hidden_sizes", {});
    if (!sizes.empty()) {
      if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0 ||
          sizes[0] % kernel->attrs_.heads != 0 || sizes[2] % kernel->attrs_.heads != 0) {
        return info.Error(
            absl::StrCat("qkv_hidden_sizes must be 3 positive sizes, the first two equal, each a "
                         "multiple of num_heads (",
                         kernel->attrs_.heads, ")"));
      }
      kernel->hidden_ = sizes[0];
      kernel->v_hidden_ = sizes[2];
    }
    const Tensor* w = info.ConstantInput(1);
    const Tensor* bias = info.ConstantInput(2);
    if (w != nullptr && w->type() == DataType::kFloat && w->rank() == 2 && w->num_elements() > 0 &&
        (bias != nullptr || !info.HasInput(2))) {
      auto dnnl =
          DnnlMatMul::Create(*w, bias, DnnlMatMul::Activation::kNone, false, DnnlMatMul::RowsHint(info.InputInfo(0)));
      if (dnnl.ok()) kernel->projection_ = *std::move(dnnl);
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* input, FloatInput(ctx, 0, "input"));
    ASSIGN_OR_RETURN(const Tensor* weights, FloatInput(ctx, 1, "weights"));
    if (input->rank() != 3 || weights->rank() != 2 || weights->dims()[0] != input->dims()[2]) {
      return ctx.Error("input must be (batch, sequence, input_hidden) and weights (input_hidden, columns); received " +
                       DimsToString(input->dims()) + " and " + DimsToString(weights->dims()));
    }
    const int64_t columns = weights->dims()[1];
    int64_t hidden = hidden_, v_hidden = v_hidden_;
    if (hidden == 0) {
      if (columns % 3 != 0) return ctx.Error(absl::StrCat("weights have ", columns, " columns, not 3 * hidden"));
      hidden = v_hidden = columns / 3;
    }
    if (2 * hidden + v_hidden != columns || hidden % attrs_.heads != 0 || v_hidden % attrs_.heads != 0) {
      return ctx.Error(absl::StrCat("weights have ", columns, " columns; expected hidden + hidden + v_hidden = ",
                                    2 * hidden + v_hidden, " with both multiples of num_heads ", attrs_.heads));
    }
    const Tensor* bias = nullptr;
    if (ctx.Input(2) != nullptr) {
      ASSIGN_OR_RETURN(bias, FloatInput(ctx, 2, "bias"));
      RETURN_IF_ERROR(RequireVector(ctx, *bias, "bias", columns));
    }
    const int64_t batch = input->dims()[0], seq = input->dims()[1], rows = batch * seq;
    const int64_t head = hidden / attrs_.heads, v_head = v_hidden / attrs_.heads;

    // [Q K V] rows.
    float* qkv = KernelScratch<float>(kScratchConvSource, rows * columns);
    if (qkv == nullptr && rows * columns > 0) return absl::ResourceExhaustedError("no memory for Q, K and V");
    if (rows > 0) RETURN_IF_ERROR(Project(ctx, *input, *weights, bias, rows, columns, qkv));

    // Past state.
    const Tensor* past = ctx.Input(4);
    int64_t past_len = 0;
    if (past != nullptr) {
      if (past->type() != DataType::kFloat || past->rank() != 5 || past->dims()[0] != 2 || past->dims()[1] != batch ||
          past->dims()[2] != attrs_.heads || past->dims()[4] != head) {
        return ctx.Error(absl::StrCat("past must be float (2, ", batch, ", ", attrs_.heads, ", past_sequence, ", head,
                                      "), received ", DimsToString(past->dims())));
      }
      if (v_hidden != hidden) return ctx.Error("with past, Q, K and V must have one hidden size");
      past_len = past->dims()[3];
    }
    const int64_t total = past_len + seq;
    AttentionProblem p = attrs_.Problem(batch, seq, total, head, v_head);
    p.q = {qkv, {seq * columns, head, columns}};
    p.k = {qkv + hidden, {seq * columns, head, columns}};
    p.v = {qkv + 2 * hidden, {seq * columns, v_head, columns}};

    Tensor state;  // (2, B, N, T, H): present, or scratch when only past is given
    const bool want_present = ctx.OutputCount() > 1 && ctx.OutputRequested(1);
    if (past != nullptr || want_present) {
      const Dims present_dims = {2, batch, attrs_.heads, total, head};
      if (want_present) {
        ASSIGN_OR_RETURN(Tensor* present, ctx.Output(1, present_dims, DataType::kFloat));
        state = *present;
      } else {
        state = Tensor::Allocate(DataType::kFloat, present_dims);
      }
      float* k_state = state.mutable_data<float>();
      float* v_state = k_state + batch * attrs_.heads * total * head;
      const float* past_k = past ? past->data<float>() : nullptr;
      const float* past_v = past ? past_k + batch * attrs_.heads * past_len * head : nullptr;
      ConcatHeads(past_k, p.k, batch, attrs_.heads, past_len, seq, head, k_state);
      ConcatHeads(past_v, p.v, batch, attrs_.heads, past_len, seq, head, v_state);
      p.k = {k_state, {attrs_.heads * total * head, total * head, head}};
      p.v = {v_state, {attrs_.heads * total * head, total * head, head}};
    }
    std::vector<float> mask;
    RETURN_IF_ERROR(SetMaskAndBias(ctx, 3, 5, attrs_.unidirectional, attrs_.mask_filter_value, past_len,
                                   /*allow_4d=*/true, p, mask));
    return RunAttention(ctx, core_, -1, p);
  }

  std::vector<int> PackedConstantInputs() const override {
    return projection_ != nullptr ? std::vector<int>{1} : std::vector<int>{};
  }

 private:
  explicit Attention(const OpKernelInfo& info) : attrs_(info) {}

  // qkv[rows, columns] = input x weights + bias.
  absl::Status Project(OpKernelContext& ctx, const Tensor& input, const Tensor& weights, const Tensor* bias,
                       int64_t rows, int64_t columns, float* qkv) const {
    const int64_t k = weights.dims()[0];
    if (projection_ != nullptr && projection_->k() == k && projection_->n() == columns) {
      absl::Status status = projection_->Run(input.data<float>(), rows, qkv);
      return status.ok() ? status : ctx.Error(status.message());
    }
    if (bias != nullptr) {
      for (int64_t r = 0; r < rows; ++r)
        std::copy(bias->data<float>(), bias->data<float>() + columns, qkv + r * columns);
    }
    Tensor w = weights;
    if (projection_ != nullptr) {
      ASSIGN_OR_RETURN(w, projection_->WithBytes(weights));
    }
    return Sgemm(false, false, rows, columns, k, 1.f, input.data<float>(), k, w.data<float>(), columns,
                 bias != nullptr ? 1.f : 0.f, qkv, columns);
  }

  AttentionAttributes attrs_;
  int64_t hidden_ = 0, v_hidden_ = 0;  // from qkv_hidden_sizes; 0: a third of the weights' columns each
  std::unique_ptr<DnnlMatMul> projection_;
  AttentionCore core_;
};

}  // namespace

void RegisterContribAttentionKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("Attention"), MakeFactory<Attention>());
}

}  // namespace onyx
