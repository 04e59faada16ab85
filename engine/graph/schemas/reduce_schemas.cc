// Reduce*-18: axes move from an attribute to an optional int64 input (as
// ReduceSum did at 13); ReduceMax-20 and ReduceMin-20 add bool.
#include <algorithm>
#include <set>

#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

namespace onyx::schemas {
namespace {

// Output shape from the input shape, the axes (when constant) and the
// attributes; rank only when the axes are not known before run time.
void InferReduce(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 1)) return;
  const bool keepdims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  const bool noop = onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int rank = in.dim_size();
  std::vector<int64_t> axes;
  const bool has_axes = ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr;
  if (has_axes) {
    const onnx::TensorProto* data = ctx.getInputData(1);
    if (data == nullptr) {
      if (keepdims) {
        auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
        for (int i = 0; i < rank; ++i) out->add_dim();
      }
      return;
    }
    axes = onnx::ParseData<int64_t>(data);
  }
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  if (axes.empty() && noop) {
    *out = in;
    return;
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      fail_shape_inference("axis ", a, " is out of range for an input of rank ", rank);
    }
    reduced.insert(a < 0 ? a + rank : a);
  }
  for (int i = 0; i < rank; ++i) {
    if (axes.empty() || reduced.count(i)) {
      if (keepdims) out->add_dim()->set_dim_value(1);
    } else {
      *out->add_dim() = in.dim(i);
    }
  }
}

onnx::OpSchema Reduce(const char* name, int version, std::vector<std::string> types) {
  onnx::OpSchema s(name, __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("keepdims", "Keep the reduced dimensions (1) or drop them (0).", onnx::AttributeProto::INT,
            static_cast<int64_t>(1))
      .Attr("noop_with_empty_axes", "With empty axes: 1 returns the input unchanged, 0 reduces every axis.",
            onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "data", "Input tensor.", "T")
      .Input(1, "axes", "Axes to reduce (int64); none or empty follows noop_with_empty_axes.", "tensor(int64)",
             onnx::OpSchema::Optional)
      .Output(0, "reduced", "Reduced tensor.", "T")
      .TypeConstraint("T", std::move(types), "Element types the reduction accepts.")
      .TypeAndShapeInferenceFunction(InferReduce);
  return s;
}

std::vector<std::string> ReduceTypes(bool with_small_ints, bool with_bool) {
  std::vector<std::string> t = {"tensor(uint32)",  "tensor(uint64)", "tensor(int32)",  "tensor(int64)",
                                "tensor(float16)", "tensor(float)",  "tensor(double)", "tensor(bfloat16)"};
  if (with_small_ints) {
    t.push_back("tensor(uint8)");
    t.push_back("tensor(int8)");
  }
  if (with_bool) t.push_back("tensor(bool)");
  return t;
}

}  // namespace

void RegisterReduceSchemas() {
  for (const char* name :
       {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMean", "ReduceProd", "ReduceSumSquare"}) {
    Register(Reduce(name, 18, ReduceTypes(false, false)));
  }
  for (const char* name : {"ReduceMax", "ReduceMin"}) {
    Register(Reduce(name, 18, ReduceTypes(true, false)));
    Register(Reduce(name, 20, ReduceTypes(true, true)));
  }
}

}  // namespace onyx::schemas
