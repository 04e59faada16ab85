// Schemas of ONNX Runtime's contrib operators (domain com.microsoft, opset 1,
// and the default-domain LayerNormalization-1 / SimplifiedLayerNormalization-1
// that ONNX Runtime defines below ONNX's LayerNormalization-17), as ONNX
// Runtime 1.30 declares them (docs/ContribOperators.md): every attribute and
// optional input, so the checker accepts what its optimizer and quantizer
// write, with type and shape inference so that shapes downstream stay known.
// RegisterContribSchemas (schema_families.h) registers the com.microsoft
// domain with onnx and calls the functions below.
#pragma once

#include <vector>

#include "onnx/defs/schema.h"

namespace onyx::schemas {

// contrib_schemas.cc: Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd,
// FusedMatMul, FusedConv, FusedGemm.
void RegisterContribElementwiseSchemas();
// contrib_norm_schemas.cc: SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, LayerNormalization-1,
// SimplifiedLayerNormalization-1, EmbedLayerNormalization.
void RegisterContribNormSchemas();
// contrib_attention_schemas.cc: Attention, MultiHeadAttention.
void RegisterContribAttentionSchemas();
// contrib_quant_schemas.cc: MatMulIntegerToFloat, DynamicQuantizeMatMul,
// QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearConcat,
// QLinearGlobalAveragePool, QLinearAveragePool.
void RegisterContribQuantSchemas();

// A com.microsoft schema of opset 1 named `name`.
onnx::OpSchema MicrosoftSchema(const char* name, const char* file, int line);

// Dim `i` of input `input`'s shape, or an unknown dim when the shape or the
// dim is unknown.
onnx::TensorShapeProto::Dimension InputDim(onnx::InferenceContext& ctx, size_t input, int i);

// Sets output `output`'s shape to `dims`.
void SetOutputShape(onnx::InferenceContext& ctx, size_t output,
                    const std::vector<onnx::TensorShapeProto::Dimension>& dims);

// The inference function of the registered schema (name, version, domain):
// contrib ops shaped like an ONNX op (FusedConv like Conv) reuse it.
onnx::InferenceFunction InferenceOf(const char* name, int version, const char* domain = "");

}  // namespace onyx::schemas
