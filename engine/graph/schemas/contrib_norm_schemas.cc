// Normalization contrib schemas: SkipLayerNormalization and
// SkipSimplifiedLayerNormalization (com.microsoft), LayerNormalization-1 and
// SimplifiedLayerNormalization-1 (ONNX Runtime's default-domain forms, below
// ONNX's LayerNormalization-17), and EmbedLayerNormalization.
#include "graph/schemas/contrib_schemas.h"
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {
namespace {

using Dim = onnx::TensorShapeProto::Dimension;

std::vector<std::string> FloatOnly() {
  return {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
}

// Output `output` gets input 0's shape with the dims from `axis` on set to 1
// (the per-row statistics of a normalization), and element type `type`.
void StatisticsShape(onnx::InferenceContext& ctx, size_t output, int64_t axis, int32_t type) {
  if (output >= ctx.getNumOutputs() || !ctx.getOutputType(output)) return;
  ctx.getOutputType(output)->mutable_tensor_type()->set_elem_type(type);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int rank = in.dim_size();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return;
  std::vector<Dim> dims;
  for (int i = 0; i < rank; ++i) {
    if (i < axis) {
      dims.push_back(in.dim(i));
    } else {
      dims.emplace_back().set_dim_value(1);
    }
  }
  SetOutputShape(ctx, output, dims);
}

// Outputs 1 and 2 (mean, inv_std_var) are float statistics per row; output 3
// (input_skip_bias_sum) is shaped like the input.
void InferSkipLayerNorm(onnx::InferenceContext& ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
  StatisticsShape(ctx, 1, -1, onnx::TensorProto::FLOAT);
  StatisticsShape(ctx, 2, -1, onnx::TensorProto::FLOAT);
  if (ctx.getNumOutputs() > 3) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
    if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 3);
  }
}

// Y takes the scale's element type (ONNX Runtime's V); the statistics are
// computed in U (float unless stash_type says double).
void InferLayerNorm(onnx::InferenceContext& ctx, size_t first_statistic) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
  const int64_t axis = onnx::getAttribute(ctx, "axis", -1);
  const int32_t stash = onnx::getAttribute(ctx, "stash_type", 1) == onnx::TensorProto::DOUBLE
                            ? onnx::TensorProto::DOUBLE
                            : onnx::TensorProto::FLOAT;
  for (size_t i = first_statistic; i < ctx.getNumOutputs(); ++i) StatisticsShape(ctx, i, axis, stash);
}

void InferEmbedLayerNorm(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  const Dim hidden = InputDim(ctx, 2, 1);
  if (onnx::hasInputShape(ctx, 0) && ctx.getInputType(0)->tensor_type().shape().dim_size() == 2) {
    SetOutputShape(ctx, 0, {InputDim(ctx, 0, 0), InputDim(ctx, 0, 1), hidden});
  }
  if (ctx.getNumOutputs() > 1) {
    onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT32);
    SetOutputShape(ctx, 1, {InputDim(ctx, 0, 0)});
  }
  if (ctx.getNumOutputs() > 2) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
    if (onnx::hasInputShape(ctx, 0) && ctx.getInputType(0)->tensor_type().shape().dim_size() == 2) {
      SetOutputShape(ctx, 2, {InputDim(ctx, 0, 0), InputDim(ctx, 0, 1), hidden});
    }
  }
}

onnx::OpSchema SkipNorm(const char* name, bool simplified, const char* file, int line) {
  onnx::OpSchema s = MicrosoftSchema(name, file, line);
  s.Attr("epsilon", "Added to the variance before the square root.", onnx::AttributeProto::FLOAT, 1e-12f)
      .Input(0, "input", "(batch, sequence, hidden) or (tokens, hidden).", "T")
      .Input(1, "skip", "Like input, or (1, sequence, hidden), or (sequence, hidden).", "T")
      .Input(2, "gamma", "Scale (hidden).", "T");
  if (simplified) {
    s.Input(3, "bias", "Added to input + skip (hidden).", "T", onnx::OpSchema::Optional);
  } else {
    s.Input(3, "beta", "Shift (hidden).", "T", onnx::OpSchema::Optional)
        .Input(4, "bias", "Added to input + skip (hidden).", "T", onnx::OpSchema::Optional);
  }
  s.Output(0, "output", "The normalized sum.", "T")
      .Output(1, "mean", "Per-row mean (0 when simplified).", "U", onnx::OpSchema::Optional)
      .Output(2, "inv_std_var", "Per-row 1 / sqrt(variance + epsilon).", "U", onnx::OpSchema::Optional)
      .Output(3, "input_skip_bias_sum", "input + skip (+ bias).", "T", onnx::OpSchema::Optional)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)"}, "Float tensors.")
      .TypeConstraint("U", {"tensor(float)"}, "Statistics are float.")
      .TypeAndShapeInferenceFunction(InferSkipLayerNorm);
  return s;
}

// LayerNormalization-1 / SimplifiedLayerNormalization-1 in the default domain.
onnx::OpSchema DefaultDomainNorm(const char* name, bool simplified, const char* file, int line) {
  onnx::OpSchema s(name, file, line);
  s.SetDomain("")
      .SinceVersion(1)
      .Attr("axis", "First normalized dimension.", onnx::AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "Added to the variance before the square root.", onnx::AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "Element type of the statistics (1 float, 11 double).", onnx::AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "X", "Input data.", "T")
      .Input(1, "scale", "Scale over the normalized dimensions.", "V");
  if (simplified) {
    s.Output(0, "Y", "X / sqrt(mean(X^2) + epsilon) * scale.", "V")
        .Output(1, "inv_std_var", "Per-row 1 / sqrt(mean(X^2) + epsilon).", "U", onnx::OpSchema::Optional)
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) { InferLayerNorm(ctx, 1); });
  } else {
    s.Input(2, "B", "Shift over the normalized dimensions.", "V", onnx::OpSchema::Optional)
        .Output(0, "Y", "(X - mean) / sqrt(variance + epsilon) * scale + B.", "V")
        .Output(1, "Mean", "Per-row mean.", "U", onnx::OpSchema::Optional)
        .Output(2, "InvStdDev", "Per-row 1 / sqrt(variance + epsilon).", "U", onnx::OpSchema::Optional)
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) { InferLayerNorm(ctx, 1); });
  }
  s.TypeConstraint("T", FloatOnly(), "Input types.")
      .TypeConstraint("U", {"tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "Statistics types.")
      .TypeConstraint("V", FloatOnly(), "Scale and output types.");
  return s;
}

}  // namespace

void RegisterContribNormSchemas() {
  Register(SkipNorm("SkipLayerNormalization", false, __FILE__, __LINE__));
  Register(SkipNorm("SkipSimplifiedLayerNormalization", true, __FILE__, __LINE__));
  Register(DefaultDomainNorm("LayerNormalization", false, __FILE__, __LINE__));
  Register(DefaultDomainNorm("SimplifiedLayerNormalization", true, __FILE__, __LINE__));
  Register(MicrosoftSchema("EmbedLayerNormalization", __FILE__, __LINE__)
               .Attr("epsilon", "Added to the variance before the square root.", onnx::AttributeProto::FLOAT, 1e-12f)
               .Attr("mask_index_type", "Mask index type for shape inference (0: none, 1: 1-D).",
                     onnx::AttributeProto::INT, onnx::OPTIONAL_VALUE)
               .Input(0, "input_ids", "Word ids (batch, sequence).", "T1")
               .Input(1, "segment_ids", "Segment ids (batch, sequence).", "T1", onnx::OpSchema::Optional)
               .Input(2, "word_embedding", "(vocabulary, hidden).", "T")
               .Input(3, "position_embedding", "(positions, hidden).", "T")
               .Input(4, "segment_embedding", "(segments, hidden).", "T", onnx::OpSchema::Optional)
               .Input(5, "gamma", "Scale (hidden).", "T")
               .Input(6, "beta", "Shift (hidden).", "T")
               .Input(7, "mask", "Attention mask (batch, sequence).", "T1", onnx::OpSchema::Optional)
               .Input(8, "position_ids", "(batch, sequence) or (1, sequence).", "T1", onnx::OpSchema::Optional)
               .Output(0, "output", "LayerNorm of the summed embeddings (batch, sequence, hidden).", "T")
               .Output(1, "mask_index", "Count of ones per mask row (batch).", "T1", onnx::OpSchema::Optional)
               .Output(2, "embedding_sum", "The summed embeddings before normalization.", "T", onnx::OpSchema::Optional)
               .TypeConstraint("T1", {"tensor(int32)"}, "Integer ids.")
               .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "Float tensors.")
               .TypeAndShapeInferenceFunction(InferEmbedLayerNorm));
}

}  // namespace onyx::schemas
