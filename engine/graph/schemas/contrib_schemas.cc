// com.microsoft element-wise and fused-product schemas (Gelu, FastGelu,
// BiasGelu, QuickGelu, BiasAdd, FusedMatMul, FusedConv, FusedGemm), and the
// registration of the whole contrib family.
#include <algorithm>
#include <string>
#include <utility>

#include "graph/op_domains.h"
#include "graph/schemas/contrib_schemas.h"
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"

namespace onyx::schemas {

onnx::OpSchema MicrosoftSchema(const char* name, const char* file, int line) {
  onnx::OpSchema s(name, file, line);
  s.SetDomain(kMicrosoftDomain).SinceVersion(1);
  return s;
}

onnx::TensorShapeProto::Dimension InputDim(onnx::InferenceContext& ctx, size_t input, int i) {
  onnx::TensorShapeProto::Dimension unknown;
  if (input >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, input)) return unknown;
  const auto& shape = ctx.getInputType(input)->tensor_type().shape();
  if (i < 0) i += shape.dim_size();
  if (i < 0 || i >= shape.dim_size()) return unknown;
  return shape.dim(i);
}

void SetOutputShape(onnx::InferenceContext& ctx, size_t output,
                    const std::vector<onnx::TensorShapeProto::Dimension>& dims) {
  if (output >= ctx.getNumOutputs()) return;
  auto* shape = ctx.getOutputType(output)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (const auto& d : dims) *shape->add_dim() = d;
}

onnx::InferenceFunction InferenceOf(const char* name, int version, const char* domain) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(name, version, domain);
  return schema != nullptr ? schema->GetTypeAndShapeInferenceFunction() : onnx::InferenceFunction();
}

namespace {

using Dim = onnx::TensorShapeProto::Dimension;

std::vector<std::string> FloatOnly() {
  return {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
}

void SameShapeAsInput0(onnx::InferenceContext& ctx) { onnx::propagateShapeAndTypeFromFirstInput(ctx); }

// The numpy broadcast of two dims; unknown when it cannot be decided.
Dim BroadcastDim(const Dim& a, const Dim& b) {
  const bool ka = a.has_dim_value(), kb = b.has_dim_value();
  if (ka && a.dim_value() == 1) return b;
  if (kb && b.dim_value() == 1) return a;
  if (ka) return a;
  if (kb) return b;
  if (a.has_dim_param() && b.has_dim_param() && a.dim_param() == b.dim_param()) return a;
  return Dim();
}

// Y = alpha * op(A) x op(B), numpy batch broadcasting; transBatchA moves A's
// first dimension behind its batch dimensions ([M, b..., K] -> [b..., M, K]).
void InferFusedMatMul(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 2)) return;
  auto dims_of = [&](size_t input, const char* trans, const char* trans_batch) {
    const auto& shape = ctx.getInputType(input)->tensor_type().shape();
    std::vector<Dim> d(shape.dim().begin(), shape.dim().end());
    if (onnx::getAttribute(ctx, trans_batch, 0) != 0 && d.size() >= 3) {
      std::rotate(d.begin(), d.begin() + 1, d.end() - 1);
    }
    if (onnx::getAttribute(ctx, trans, 0) != 0 && d.size() >= 2) std::swap(d[d.size() - 1], d[d.size() - 2]);
    return d;
  };
  std::vector<Dim> a = dims_of(0, "transA", "transBatchA");
  std::vector<Dim> b = dims_of(1, "transB", "transBatchB");
  if (a.empty() || b.empty()) return;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim());
  if (b_vector) b.push_back(Dim());
  const size_t batch_a = a.size() - 2, batch_b = b.size() - 2, batch = std::max(batch_a, batch_b);
  std::vector<Dim> out;
  for (size_t i = 0; i < batch; ++i) {
    Dim one;
    one.set_dim_value(1);
    const Dim& da = i + batch_a >= batch ? a[i + batch_a - batch] : one;
    const Dim& db = i + batch_b >= batch ? b[i + batch_b - batch] : one;
    out.push_back(BroadcastDim(da, db));
  }
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  SetOutputShape(ctx, 0, out);
}

void RegisterActivations() {
  Register(MicrosoftSchema("Gelu", __FILE__, __LINE__)
               .Input(0, "X", "The input data.", "T")
               .Output(0, "Y", "0.5 * X * (1 + erf(X / sqrt(2))).", "T")
               .TypeConstraint("T", FloatOnly(), "Float tensors.")
               .TypeAndShapeInferenceFunction(SameShapeAsInput0));
  Register(
      MicrosoftSchema("FastGelu", __FILE__, __LINE__)
          .Input(0, "X", "Input tensor.", "T")
          .Input(1, "bias", "Bias over the last dimension, added before the activation.", "T", onnx::OpSchema::Optional)
          .Output(0, "Y", "The tanh approximation of GELU.", "T")
          .TypeConstraint("T", FloatOnly(), "Float tensors.")
          .TypeAndShapeInferenceFunction(SameShapeAsInput0));
  Register(MicrosoftSchema("BiasGelu", __FILE__, __LINE__)
               .Input(0, "A", "The input data.", "T")
               .Input(1, "B", "Bias over the last dimension (1-D).", "T")
               .Output(0, "C", "Gelu(A + B).", "T")
               .TypeConstraint("T", FloatOnly(), "Float tensors.")
               .TypeAndShapeInferenceFunction(SameShapeAsInput0));
  Register(MicrosoftSchema("QuickGelu", __FILE__, __LINE__)
               .Attr("alpha", "Alpha of x * Sigmoid(alpha * x).", onnx::AttributeProto::FLOAT, 1.702f)
               .Input(0, "X", "The input data.", "T")
               .Output(0, "Y", "X * Sigmoid(alpha * X).", "T")
               .TypeConstraint("T", FloatOnly(), "Float tensors.")
               .TypeAndShapeInferenceFunction(SameShapeAsInput0));
  Register(MicrosoftSchema("BiasAdd", __FILE__, __LINE__)
               .Input(0, "X", "Input (N, S, C).", "T")
               .Input(1, "bias", "Bias (C).", "T")
               .Input(2, "skip", "Residual (N, S, C).", "T")
               .Output(0, "Y", "X + bias + skip.", "T")
               .TypeConstraint("T", {"tensor(float16)", "tensor(float)"}, "Float tensors.")
               .TypeAndShapeInferenceFunction(SameShapeAsInput0));
}

void RegisterFusedProducts() {
  Register(MicrosoftSchema("FusedMatMul", __FILE__, __LINE__)
               .Attr("alpha", "Scale of the product.", onnx::AttributeProto::FLOAT, 1.0f)
               .Attr("transA", "Transpose A's last two dimensions.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
               .Attr("transB", "Transpose B's last two dimensions.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
               .Attr("transBatchA", "Move A's first dimension behind its batch dimensions.", onnx::AttributeProto::INT,
                     static_cast<int64_t>(0))
               .Attr("transBatchB", "Move B's first dimension behind its batch dimensions.", onnx::AttributeProto::INT,
                     static_cast<int64_t>(0))
               .Input(0, "A", "N-dimensional matrix A.", "T")
               .Input(1, "B", "N-dimensional matrix B.", "T")
               .Output(0, "Y", "alpha * op(A) x op(B).", "T")
               .TypeConstraint("T", FloatOnly(), "Float tensors.")
               .TypeAndShapeInferenceFunction(InferFusedMatMul));
  Register(
      MicrosoftSchema("FusedConv", __FILE__, __LINE__)
          .Attr("auto_pad", "As Conv's.", onnx::AttributeProto::STRING, std::string("NOTSET"))
          .Attr("kernel_shape", "As Conv's.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Attr("dilations", "As Conv's.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Attr("strides", "As Conv's.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Attr("pads", "As Conv's.", onnx::AttributeProto::INTS, onnx::OPTIONAL_VALUE)
          .Attr("group", "As Conv's.", onnx::AttributeProto::INT, static_cast<int64_t>(1))
          .Attr("activation", "Activation after the sum.", onnx::AttributeProto::STRING, onnx::OPTIONAL_VALUE)
          .Attr("activation_params", "The activation's parameters.", onnx::AttributeProto::FLOATS, onnx::OPTIONAL_VALUE)
          .Input(0, "X", "As Conv's.", "T")
          .Input(1, "W", "As Conv's.", "T")
          .Input(2, "B", "As Conv's.", "T", onnx::OpSchema::Optional)
          .Input(3, "Z", "Added to the convolution before the activation.", "T", onnx::OpSchema::Optional)
          .Output(0, "Y", "activation(Conv(X, W, B) + Z).", "T")
          .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "Float tensors.")
          .TypeAndShapeInferenceFunction(InferenceOf("Conv", 11)));
  Register(MicrosoftSchema("FusedGemm", __FILE__, __LINE__)
               .Attr("transA", "As Gemm's.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
               .Attr("transB", "As Gemm's.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
               .Attr("alpha", "As Gemm's.", onnx::AttributeProto::FLOAT, 1.0f)
               .Attr("beta", "As Gemm's.", onnx::AttributeProto::FLOAT, 1.0f)
               .Attr("activation", "Activation of the product.", onnx::AttributeProto::STRING, onnx::OPTIONAL_VALUE)
               .Attr("activation_alpha", "The activation's alpha.", onnx::AttributeProto::FLOAT, onnx::OPTIONAL_VALUE)
               .Attr("activation_beta", "The activation's beta.", onnx::AttributeProto::FLOAT, onnx::OPTIONAL_VALUE)
               .Attr("activation_gamma", "The activation's gamma.", onnx::AttributeProto::FLOAT, onnx::OPTIONAL_VALUE)
               .Input(0, "A", "As Gemm's.", "T")
               .Input(1, "B", "As Gemm's.", "T")
               .Input(2, "C", "As Gemm's.", "T", onnx::OpSchema::Optional)
               .Output(0, "Y", "activation(Gemm(A, B, C)).", "T")
               .TypeConstraint("T",
                               {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(uint32)",
                                "tensor(uint64)", "tensor(int32)", "tensor(int64)"},
                               "Float and integer tensors.")
               .TypeAndShapeInferenceFunction(InferenceOf("Gemm", 13)));
}

// The registry refuses schemas of a domain it has no version range for.
void AddMicrosoftDomain() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  if (ranges.count(kMicrosoftDomain) == 0) {
    onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(kMicrosoftDomain, 1, 1);
  }
}

}  // namespace

void RegisterContribElementwiseSchemas() {
  RegisterActivations();
  RegisterFusedProducts();
}

void RegisterContribSchemas() {
  AddMicrosoftDomain();
  RegisterContribElementwiseSchemas();
  RegisterContribNormSchemas();
  RegisterContribAttentionSchemas();
  RegisterContribQuantSchemas();
}

}  // namespace onyx::schemas
