#include "graph/schemas/newer_opsets.h"

#include <mutex>
#include <unordered_map>
#include <utility>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/schema.h"

namespace onyx {
namespace schemas {

void Register(onnx::OpSchema schema) { onnx::RegisterSchema(std::move(schema)); }

onnx::TensorShapeProto* SameRankOutputShape(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 1)) return nullptr;
  const int rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  out->clear_dim();
  for (int i = 0; i < rank; ++i) out->add_dim();
  return out;
}

std::vector<std::string> FloatTypes() {
  return {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
}

std::vector<std::string> NumericTypes() {
  return {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)",  "tensor(uint64)", "tensor(int8)",   "tensor(int16)",
          "tensor(int32)", "tensor(int64)",  "tensor(float16)", "tensor(float)",  "tensor(double)", "tensor(bfloat16)"};
}

std::vector<std::string> AllTensorTypes() {
  std::vector<std::string> all = NumericTypes();
  for (const char* t : {"tensor(bool)", "tensor(string)", "tensor(complex64)", "tensor(complex128)"}) all.push_back(t);
  return all;
}

}  // namespace schemas

namespace {

// The registry refuses a schema whose version lies outside its domain's range,
// and offers no setter for that range; the map behind the const accessor is an
// ordinary member, so it is widened in place before anything registers.
void RaiseDefaultDomainRange() {
  auto& ranges = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map());
  auto& onnx_range = ranges[onnx::ONNX_DOMAIN];
  if (onnx_range.second < kMaxOnnxOpset) onnx_range.second = kMaxOnnxOpset;
}

}  // namespace

void RegisterNewerOpsetSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Touching the registry first makes onnx register its own schemas, so
    // ours never race or precede them.
    (void)onnx::OpSchemaRegistry::Schema("Relu", 14, "");
    RaiseDefaultDomainRange();
    schemas::RegisterReduceSchemas();
    schemas::RegisterTensorSchemas();
    schemas::RegisterNnSchemas();
    schemas::RegisterQuantSchemas();
    schemas::RegisterLlmSchemas();
    schemas::RegisterSignalSchemas();
    schemas::RegisterStringSchemas();
    schemas::RegisterOptionalSchemas();
    schemas::RegisterContribSchemas();
    schemas::RegisterMlSchemas();
    // Last: it copies the newest older schemas, some of which are registered above.
    schemas::RegisterBfloat16Schemas();
  });
}

}  // namespace onyx
