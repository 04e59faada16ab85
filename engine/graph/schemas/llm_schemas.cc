// The transformer ops of opset 23: RMSNormalization, RotaryEmbedding and
// Attention. onnx defines them as functions; the engine runs its own kernels,
// so only the signatures and the shape inference are registered here.
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

// Rank, or -1 when input i has no shape.
int RankOf(onnx::InferenceContext& ctx, size_t i) {
  if (ctx.getNumInputs() <= i || ctx.getInputType(i) == nullptr || !onnx::hasInputShape(ctx, i)) return -1;
  return ctx.getInputType(i)->tensor_type().shape().dim_size();
}

const onnx::TensorShapeProto::Dimension& DimOf(onnx::InferenceContext& ctx, size_t i, int d) {
  return ctx.getInputType(i)->tensor_type().shape().dim(d);
}

onnx::OpSchema RmsNormalization() {
  onnx::OpSchema s("RMSNormalization", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(23)
      .Attr("axis", "First normalized dimension; the mean of squares runs over [axis, rank).",
            onnx::AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "Added to the mean of squares.", onnx::AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "Type the mean of squares is computed in (float by default).", onnx::AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "X", "Input.", "T")
      .Input(1, "scale", "Scale, broadcastable to the normalized shape.", "V")
      .Output(0, "Y", "X normalized and scaled; shaped as X.", "V")
      .TypeConstraint("T", FloatTypes(), "Input types.")
      .TypeConstraint("V", FloatTypes(), "Scale and output types.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

onnx::OpSchema RotaryEmbedding() {
  onnx::OpSchema s("RotaryEmbedding", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(23)
      .Attr("interleaved", "Rotate pairs (x0, x1), (x2, x3), ... (1) instead of the two halves (0).",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("num_heads", "Number of heads; required for 3-D input.", onnx::AttributeProto::INT, onnx::OPTIONAL_VALUE)
      .Attr("rotary_embedding_dim", "Leading part of each head that is rotated; 0: all of it.",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "X", "[batch, heads, seq, head_size] or [batch, seq, hidden].", "T")
      .Input(1, "cos_cache", "[max_position, dim/2] with position_ids, else [batch, seq, dim/2].", "T")
      .Input(2, "sin_cache", "Shaped as cos_cache.", "T")
      .Input(3, "position_ids", "[batch, seq] positions into the caches.", "M", onnx::OpSchema::Optional)
      .Output(0, "Y", "Rotated X.", "T")
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "Input types.")
      .TypeConstraint("M", {"tensor(int64)"}, "Position types.")
      .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        const int rank = RankOf(ctx, 0);
        if (rank < 0) return;
        if (rank != 3 && rank != 4) fail_shape_inference("input must have rank 3 or 4, received ", rank);
        if (rank == 3 && ctx.getAttribute("num_heads") == nullptr) {
          fail_shape_inference("3-D input needs the num_heads attribute");
        }
        onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return s;
}

// Y: [B, Hq, S, Dv] (4-D) or [B, S, Hq * Dv] (3-D); present_*: [B, Hk,
// past + T, D]; qk_matmul_output: [B, Hq, S, past + T]. Dims that cannot be
// worked out are left unknown.
void InferAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (ctx.getNumOutputs() > 1) onnx::propagateElemTypeFromInputToOutput(ctx, 1, 1);
  if (ctx.getNumOutputs() > 2) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
  if (ctx.getNumOutputs() > 3) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
  const int rank = RankOf(ctx, 0);
  if (rank < 0) return;
  if (rank != 3 && rank != 4) fail_shape_inference("Q must have rank 3 or 4, received ", rank);
  for (size_t i : {1, 2}) {
    const int r = RankOf(ctx, i);
    if (r >= 0 && r != rank) fail_shape_inference("Q, K and V must have the same rank");
  }
  const auto* q_heads = ctx.getAttribute("q_num_heads");
  const auto* kv_heads = ctx.getAttribute("kv_num_heads");
  if (rank == 3 && (q_heads == nullptr || kv_heads == nullptr)) {
    fail_shape_inference("3-D inputs need the q_num_heads and kv_num_heads attributes");
  }
  auto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  y->Clear();
  const bool v_known = RankOf(ctx, 2) == rank;
  if (rank == 4) {
    for (int d = 0; d < 3; ++d) *y->add_dim() = DimOf(ctx, 0, d);
    auto* dv = y->add_dim();
    if (v_known) *dv = DimOf(ctx, 2, 3);
  } else {
    *y->add_dim() = DimOf(ctx, 0, 0);
    *y->add_dim() = DimOf(ctx, 0, 1);
    auto* hidden = y->add_dim();
    if (v_known && DimOf(ctx, 2, 2).has_dim_value() && kv_heads->i() > 0) {
      hidden->set_dim_value(DimOf(ctx, 2, 2).dim_value() / kv_heads->i() * q_heads->i());
    }
  }
}

onnx::OpSchema Attention() {
  const std::vector<std::string> mask_types = {"tensor(bool)",   "tensor(float)", "tensor(float16)", "tensor(bfloat16)",
                                               "tensor(double)", "tensor(int8)",  "tensor(int16)",   "tensor(int32)",
                                               "tensor(int64)",  "tensor(uint8)", "tensor(uint16)",  "tensor(uint32)",
                                               "tensor(uint64)"};
  onnx::OpSchema s("Attention", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(23)
      .Attr("is_causal", "Mask keys after each query's position (offset by the past length).",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("kv_num_heads", "Key/value heads; required for 3-D inputs.", onnx::AttributeProto::INT,
            onnx::OPTIONAL_VALUE)
      .Attr("q_num_heads", "Query heads; required for 3-D inputs.", onnx::AttributeProto::INT, onnx::OPTIONAL_VALUE)
      .Attr("qk_matmul_output_mode",
            "What qk_matmul_output holds: 0 scaled QK^T, 1 after softcap, 2 after the mask, 3 after softmax.",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("scale", "Scale of QK^T; 1/sqrt(head_size) when absent.", onnx::AttributeProto::FLOAT, onnx::OPTIONAL_VALUE)
      .Attr("softcap", "softcap * tanh(x / softcap) of the scores when > 0.", onnx::AttributeProto::FLOAT, 0.0f)
      .Attr("softmax_precision", "Type the softmax is computed in.", onnx::AttributeProto::INT, onnx::OPTIONAL_VALUE)
      .Input(0, "Q", "[B, Hq, S, D] or [B, S, Hq * D].", "T1")
      .Input(1, "K", "[B, Hk, T, D] or [B, T, Hk * D].", "T1")
      .Input(2, "V", "[B, Hk, T, Dv] or [B, T, Hk * Dv].", "T2")
      .Input(3, "attn_mask", "bool (true attends) or additive mask broadcastable to [B, Hq, S, past + T].", "U",
             onnx::OpSchema::Optional)
      .Input(4, "past_key", "[B, Hk, past, D].", "T1", onnx::OpSchema::Optional)
      .Input(5, "past_value", "[B, Hk, past, Dv].", "T2", onnx::OpSchema::Optional)
      .Output(0, "Y", "[B, Hq, S, Dv] or [B, S, Hq * Dv].", "T1")
      .Output(1, "present_key", "past_key followed by K: [B, Hk, past + T, D].", "T1", onnx::OpSchema::Optional)
      .Output(2, "present_value", "past_value followed by V: [B, Hk, past + T, Dv].", "T2", onnx::OpSchema::Optional)
      .Output(3, "qk_matmul_output", "[B, Hq, S, past + T], chosen by qk_matmul_output_mode.", "T1",
              onnx::OpSchema::Optional)
      .TypeConstraint("T1", FloatTypes(), "Query and key types.")
      .TypeConstraint("T2", FloatTypes(), "Value types.")
      .TypeConstraint("U", mask_types, "Mask types.")
      .TypeAndShapeInferenceFunction(InferAttention);
  return s;
}

}  // namespace

void RegisterLlmSchemas() {
  Register(RmsNormalization());
  Register(RotaryEmbedding());
  Register(Attention());
}

}  // namespace onyx::schemas
