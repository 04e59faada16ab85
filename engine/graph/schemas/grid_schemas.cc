// GridSample-20 (N-D input; modes renamed linear / nearest / cubic), its
// type bump GridSample-22 (bfloat16 grids) and AffineGrid-20.
#include "graph/schemas/schema_families.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

namespace onyx::schemas {
namespace {

using onnx::AttributeProto;
using onnx::OpSchema;

// Y = (N, C, grid's spatial dims): the grid is (N, D1_out, ..., Dr_out, r).
void InferGridSample(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 2)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const auto& grid = onnx::getInputShape(ctx, 1);
  if (x.dim_size() < 3 || grid.dim_size() != x.dim_size()) {
    fail_shape_inference("X (rank ", x.dim_size(), ") and grid (rank ", grid.dim_size(),
                         ") must have the same rank >= 3");
  }
  const auto& last = grid.dim(grid.dim_size() - 1);
  if (last.has_dim_value() && last.dim_value() != x.dim_size() - 2) {
    fail_shape_inference("grid's last dimension must be ", x.dim_size() - 2, ", received ", last.dim_value());
  }
  auto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  auto* n = y->add_dim();
  *n = x.dim(0);
  onnx::unifyDim(grid.dim(0), *n);
  *y->add_dim() = x.dim(1);
  for (int i = 1; i < grid.dim_size() - 1; ++i) *y->add_dim() = grid.dim(i);
}

OpSchema GridSample(int version) {
  std::vector<std::string> grid_types = {"tensor(float16)", "tensor(float)", "tensor(double)"};
  std::vector<std::string> data_types = OpSchema::all_tensor_types();
  if (version >= 22) {  // opset 22 added bfloat16 to both
    grid_types.push_back("tensor(bfloat16)");
    data_types.push_back("tensor(bfloat16)");
  }
  OpSchema s("GridSample", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(version)
      .Attr("align_corners",
            "Extreme grid values -1 and 1 are the centres (1) or the outer edges (0) of the corner "
            "elements.",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("mode", "Interpolation: linear, nearest or cubic.", AttributeProto::STRING, std::string("linear"))
      .Attr("padding_mode", "Values outside the input: zeros, border or reflection.", AttributeProto::STRING,
            std::string("zeros"))
      .Input(0, "X", "Input of shape (N, C, D1, ..., Dr).", "T1")
      .Input(1, "grid", "Sampling locations of shape (N, D1_out, ..., Dr_out, r), normalised to [-1, 1].", "T2")
      .Output(0, "Y", "Output of shape (N, C, D1_out, ..., Dr_out).", "T1")
      .TypeConstraint("T1", std::move(data_types), "Input and output types.")
      .TypeConstraint("T2", std::move(grid_types), "Grid types.")
      .TypeAndShapeInferenceFunction(InferGridSample);
  return s;
}

// grid = (N, H, W, 2) for a size of 4 values, (N, D, H, W, 3) for 5; the
// sizes are known when `size` is a constant.
void InferAffineGrid(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  int64_t spatial = 0;
  if (onnx::hasInputShape(ctx, 0)) {
    const auto& theta = onnx::getInputShape(ctx, 0);
    if (theta.dim_size() != 3) fail_shape_inference("theta must have rank 3, received rank ", theta.dim_size());
    if (theta.dim(1).has_dim_value()) spatial = theta.dim(1).dim_value();
  }
  const onnx::TensorProto* size_data = ctx.getInputData(1);
  std::vector<int64_t> size;
  if (size_data != nullptr) size = onnx::ParseData<int64_t>(size_data);
  if (!size.empty()) {
    if (size.size() != 4 && size.size() != 5) fail_shape_inference("size must hold 4 or 5 values");
    if (spatial != 0 && spatial != static_cast<int64_t>(size.size()) - 2) {
      fail_shape_inference("theta is for ", spatial, " spatial dims, size for ", size.size() - 2);
    }
    spatial = static_cast<int64_t>(size.size()) - 2;
  }
  if (spatial != 2 && spatial != 3) return;
  auto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  auto* n = y->add_dim();
  if (!size.empty()) n->set_dim_value(size[0]);
  if (onnx::hasInputShape(ctx, 0)) onnx::unifyDim(onnx::getInputShape(ctx, 0).dim(0), *n);
  for (int64_t i = 0; i < spatial; ++i) {
    auto* d = y->add_dim();
    if (!size.empty()) d->set_dim_value(size[2 + i]);
  }
  y->add_dim()->set_dim_value(spatial);
}

OpSchema AffineGrid20() {
  OpSchema s("AffineGrid", __FILE__, __LINE__);
  s.SetDomain("")
      .SinceVersion(20)
      .Attr("align_corners", "Grid values -1 and 1 at the centres (1) or the outer edges (0) of the corner elements.",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "theta", "Affine matrices of shape (N, 2, 3) or (N, 3, 4).", "T1")
      .Input(1, "size", "Target image size (N, C, H, W) or (N, C, D, H, W).", "T2")
      .Output(0, "grid", "Sampling grid of shape (N, H, W, 2) or (N, D, H, W, 3).", "T1")
      .TypeConstraint("T1", FloatTypes(), "Float types.")
      .TypeConstraint("T2", {"tensor(int64)"}, "int64.")
      .TypeAndShapeInferenceFunction(InferAffineGrid);
  return s;
}

}  // namespace

void RegisterGridSchemas() {
  Register(GridSample(20));
  Register(GridSample(22));
  Register(AffineGrid20());
}

}  // namespace onyx::schemas
