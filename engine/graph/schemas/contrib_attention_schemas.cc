// Attention and MultiHeadAttention (com.microsoft) as ONNX Runtime 1.30
// declares them, with the output shapes their CPU kernels produce.
#include "graph/schemas/contrib_schemas.h"
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

using Dim = onnx::TensorShapeProto::Dimension;

Dim Value(int64_t v) {
  Dim d;
  d.set_dim_value(v);
  return d;
}

int Rank(onnx::InferenceContext& ctx, size_t input) {
  if (input >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, input)) return -1;
  return ctx.getInputType(input)->tensor_type().shape().dim_size();
}

Dim Sum(const Dim& a, const Dim& b) {
  return a.has_dim_value() && b.has_dim_value() ? Value(a.dim_value() + b.dim_value()) : Dim();
}

// Attention: output (B, S, v_hidden); present (2, B, N, P + S, head_size).
void InferAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  std::vector<int64_t> sizes;
  if (const auto* attr = ctx.getAttribute("qkv_hidden_sizes")) sizes.assign(attr->ints().begin(), attr->ints().end());
  const Dim w_cols = InputDim(ctx, 1, 1);
  Dim hidden, v_hidden;
  if (sizes.size() == 3) {
    hidden = Value(sizes[0]);
    v_hidden = Value(sizes[2]);
  } else if (w_cols.has_dim_value() && w_cols.dim_value() % 3 == 0) {
    hidden = v_hidden = Value(w_cols.dim_value() / 3);
  }
  if (Rank(ctx, 0) == 3) SetOutputShape(ctx, 0, {InputDim(ctx, 0, 0), InputDim(ctx, 0, 1), v_hidden});
  if (ctx.getNumOutputs() < 2) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  Dim head_size;
  if (hidden.has_dim_value() && heads > 0) head_size = Value(hidden.dim_value() / heads);
  const Dim seq = InputDim(ctx, 0, 1);
  const bool has_past = ctx.getNumInputs() > 4 && ctx.getInputType(4) != nullptr;
  Dim total = seq;
  if (has_past) total = Rank(ctx, 4) == 5 ? Sum(InputDim(ctx, 4, 3), seq) : Dim();
  SetOutputShape(ctx, 1, {Value(2), InputDim(ctx, 0, 0), heads > 0 ? Value(heads) : Dim(), total, head_size});
}

// MultiHeadAttention: output (B, S, v_hidden); present_key / present_value
// (B, N, P + L, head_size); qk (B, N, S, P + L).
void InferMultiHeadAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  const Dim batch = InputDim(ctx, 0, 0), seq = InputDim(ctx, 0, 1);
  const int q_rank = Rank(ctx, 0), k_rank = Rank(ctx, 1), v_rank = Rank(ctx, 2);
  Dim hidden, v_hidden, kv_seq, head_size;
  if (q_rank == 3) {
    hidden = InputDim(ctx, 0, 2);
    if (hidden.has_dim_value() && heads > 0) head_size = Value(hidden.dim_value() / heads);
  } else if (q_rank == 5) {  // packed QKV (B, S, N, 3, H)
    head_size = InputDim(ctx, 0, 4);
    kv_seq = seq;
  }
  if (v_rank == 3) {
    v_hidden = InputDim(ctx, 2, 2);
    kv_seq = InputDim(ctx, 2, 1);
  } else if (v_rank == 4) {  // value is the past value (B, N, L, H)
    const Dim h = InputDim(ctx, 2, 3);
    if (h.has_dim_value() && heads > 0) v_hidden = Value(h.dim_value() * heads);
    kv_seq = InputDim(ctx, 2, 2);
  } else if (head_size.has_dim_value() && heads > 0) {  // packed KV or QKV
    v_hidden = Value(head_size.dim_value() * heads);
    if (k_rank == 5) kv_seq = InputDim(ctx, 1, 1);
  }
  if (q_rank == 3 || q_rank == 5) SetOutputShape(ctx, 0, {batch, seq, v_hidden});
  const bool has_past = ctx.getNumInputs() > 6 && ctx.getInputType(6) != nullptr && Rank(ctx, 6) == 4;
  const Dim total = has_past ? Sum(InputDim(ctx, 6, 2), kv_seq) : kv_seq;
  const Dim n = heads > 0 ? Value(heads) : Dim();
  for (size_t out = 1; out < 3 && out < ctx.getNumOutputs(); ++out) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
    Dim size = head_size;
    if (out == 2 && v_hidden.has_dim_value() && heads > 0) size = Value(v_hidden.dim_value() / heads);
    SetOutputShape(ctx, out, {batch, n, total, size});
  }
  if (ctx.getNumOutputs() > 3) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
    SetOutputShape(ctx, 3, {batch, n, seq, total});
  }
}

}  // namespace

void RegisterContribAttentionSchemas() {
  const std::vector<std::string> t = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"};
  Register(
      MicrosoftSchema("Attention", __FILE__, __LINE__)
          .Attr("num_heads", "Number of attention heads.", onnx::AttributeProto::INT)
          .Attr("unidirectional", "Each token attends only to earlier ones (1).", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Attr("do_rotary", "Rotary position embedding (1).", onnx::AttributeProto::INT, static_cast<int64_t>(0))
          .Attr("past_present_share_buffer", "past and present are one buffer (1).", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Attr("mask_filter_value", "Added to masked scores.", onnx::AttributeProto::FLOAT, -10000.0f)
          .Attr("qkv_hidden_sizes", "Hidden sizes of Q, K and V.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Attr("rotary_embedding_dim", "Dimension of the rotary embedding.", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Attr("scale", "Scale of Q x K' (default 1 / sqrt(head_size)).", onnx::AttributeProto::FLOAT,
                onnx::OPTIONAL_VALUE)
          .Input(0, "input", "(batch, sequence, input_hidden).", "T")
          .Input(1, "weights", "Merged Q/K/V weights (input_hidden, hidden + hidden + v_hidden).", "T")
          .Input(2, "bias", "Q/K/V bias (hidden + hidden + v_hidden).", "T", onnx::OpSchema::Optional)
          .Input(3, "mask_index", "Lengths (B) or (2B) or (3B + 2), or a 0/1 mask of rank 2, 3 or 4.", "M",
                 onnx::OpSchema::Optional)
          .Input(4, "past", "Past key and value (2, B, N, past, head_size).", "T", onnx::OpSchema::Optional)
          .Input(5, "attention_bias", "Added to the scores (B or 1, N or 1, S, total).", "T", onnx::OpSchema::Optional)
          .Input(6, "past_sequence_length", "With past_present_share_buffer.", "M", onnx::OpSchema::Optional)
          .Output(0, "output", "(batch, sequence, v_hidden).", "T")
          .Output(1, "present", "Key and value (2, B, N, past + sequence, head_size).", "T", onnx::OpSchema::Optional)
          .TypeConstraint("T", t, "Float tensors.")
          .TypeConstraint("M", {"tensor(int32)"}, "Mask index.")
          .TypeAndShapeInferenceFunction(InferAttention));
  Register(
      MicrosoftSchema("MultiHeadAttention", __FILE__, __LINE__)
          .Attr("num_heads", "Number of attention heads.", onnx::AttributeProto::INT)
          .Attr("mask_filter_value", "Added to masked scores.", onnx::AttributeProto::FLOAT, -10000.0f)
          .Attr("scale", "Scale of Q x K' (default 1 / sqrt(head_size)).", onnx::AttributeProto::FLOAT,
                onnx::OPTIONAL_VALUE)
          .Attr("unidirectional", "Each token attends only to earlier ones (1).", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Input(0, "query", "(B, S, hidden) or packed QKV (B, S, N, 3, head_size).", "T")
          .Input(1, "key", "(B, L, hidden), packed KV (B, L, N, 2, head_size) or (B, N, L, head_size).", "T",
                 onnx::OpSchema::Optional)
          .Input(2, "value", "(B, L, v_hidden) or (B, N, L, head_size).", "T", onnx::OpSchema::Optional)
          .Input(3, "bias", "Q/K/V bias (hidden + hidden + v_hidden).", "T", onnx::OpSchema::Optional)
          .Input(4, "key_padding_mask", "Lengths (B) or (3B + 2), or a 0/1 mask of rank 2 or 3.", "M",
                 onnx::OpSchema::Optional)
          .Input(5, "attention_bias", "Added to the scores (B or 1, N or 1, S, total).", "T", onnx::OpSchema::Optional)
          .Input(6, "past_key", "(B, N, past, head_size).", "T", onnx::OpSchema::Optional)
          .Input(7, "past_value", "(B, N, past, head_size).", "T", onnx::OpSchema::Optional)
          .Input(8, "past_sequence_length", "With buffer sharing.", "M", onnx::OpSchema::Optional)
          .Input(9, "cache_indirection", "Beam indices (B, beam, max_sequence).", "M", onnx::OpSchema::Optional)
          .Output(0, "output", "(B, S, v_hidden).", "T")
          .Output(1, "present_key", "(B, N, past + L, head_size).", "T", onnx::OpSchema::Optional)
          .Output(2, "present_value", "(B, N, past + L, head_size).", "T", onnx::OpSchema::Optional)
          .Output(3, "qk", "Scaled Q x K' (B, N, S, past + L).", "QK", onnx::OpSchema::Optional)
          .TypeConstraint("T", t, "Float tensors.")
          .TypeConstraint("QK", t, "Float tensors.")
          .TypeConstraint("M", {"tensor(int32)"}, "Mask and lengths.")
          .TypeAndShapeInferenceFunction(InferMultiHeadAttention));
}

}  // namespace onyx::schemas
