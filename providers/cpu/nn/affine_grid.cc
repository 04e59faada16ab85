// AffineGrid-20: the sampling grid GridSample takes for a batch of affine
// maps. theta (N, 2, 3) and size (N, C, H, W) give (N, H, W, 2); theta
// (N, 3, 4) and size (N, C, D, H, W) give (N, D, H, W, 3). Each output holds
// theta @ [x, y, (z,) 1] for the normalised base coordinates of its position,
// x innermost. Base coordinates are spaced evenly over [-1, 1] (element
// centres at the ends with align_corners, else scaled by (n - 1) / n so the
// ends are the outer edges); a size of 1 gives 1 with align_corners (as
// ONNX Runtime's Eigen LinSpaced does) and 0 without.
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

std::vector<double> BaseCoordinates(int64_t n, bool align_corners) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) {
    const double linear = n == 1 ? 1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    v[i] = align_corners ? linear : linear * static_cast<double>(n - 1) / static_cast<double>(n);
  }
  return v;
}

class AffineGrid final : public OpKernel {
 public:
  explicit AffineGrid(const OpKernelInfo& info) : align_corners_(info.AttrOr<int64_t>("align_corners", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* theta_in, RequireInput(ctx, 0, "theta"));
    ASSIGN_OR_RETURN(const Tensor* size_in, RequireInput(ctx, 1, "size"));
    if (size_in->type() != DataType::kInt64 || size_in->rank() != 1 ||
        (size_in->num_elements() != 4 && size_in->num_elements() != 5)) {
      return ctx.Error("size must be int64 [N, C, H, W] or [N, C, D, H, W], received " + DimsToString(size_in->dims()));
    }
    const int64_t* size = size_in->data<int64_t>();
    const int spatial = static_cast<int>(size_in->num_elements()) - 2;
    const Dims& td = theta_in->dims();
    if (theta_in->rank() != 3 || td[1] != spatial || td[2] != spatial + 1) {
      return ctx.Error(absl::StrCat("theta must be [N, ", spatial, ", ", spatial + 1, "] for a size of ", spatial + 2,
                                    " values, received ", DimsToString(td)));
    }
    if (td[0] != size[0]) {
      return ctx.Error(absl::StrCat("size[0] (", size[0], ") must equal theta's batch dimension (", td[0], ")"));
    }
    Dims out_dims = {size[0]};
    for (int d = 0; d < spatial; ++d) {
      if (size[2 + d] < 0) return ctx.Error(absl::StrCat("size has a negative dimension: ", size[2 + d]));
      out_dims.push_back(size[2 + d]);
    }
    out_dims.push_back(spatial);
    ASSIGN_OR_RETURN(Tensor* grid_out, ctx.Output(0, out_dims, theta_in->type()));
    ASSIGN_OR_RETURN(Tensor theta, ConvertNumeric(*theta_in, DataType::kDouble));
    Tensor grid = Tensor::Allocate(DataType::kDouble, out_dims);
    // base[d] for spatial axis d (outermost first); the coordinate vector is
    // innermost first: x = base of the last axis.
    std::vector<std::vector<double>> base;
    int64_t positions = 1;
    for (int d = 0; d < spatial; ++d) {
      base.push_back(BaseCoordinates(size[2 + d], align_corners_));
      positions *= size[2 + d];
    }
    const double* pt = theta.data<double>();
    double* pg = grid.mutable_data<double>();
    ParallelFor(size[0] * positions, 1024, [&](int64_t begin, int64_t end) {
      double coord[4];
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / positions;
        int64_t rest = p % positions;
        for (int d = spatial - 1; d >= 0; --d) {
          const int64_t extent = size[2 + d];
          coord[spatial - 1 - d] = base[d][rest % extent];
          rest /= extent;
        }
        coord[spatial] = 1;
        const double* m = pt + b * spatial * (spatial + 1);
        for (int r = 0; r < spatial; ++r) {
          double v = 0;
          for (int k = 0; k <= spatial; ++k) v += m[r * (spatial + 1) + k] * coord[k];
          pg[p * spatial + r] = v;
        }
      }
    });
    ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(grid, theta_in->type()));
    std::memcpy(grid_out->mutable_raw(), converted.raw(), grid_out->byte_size());
    return absl::OkStatus();
  }

 private:
  bool align_corners_;
};

}  // namespace

void RegisterAffineGridKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("AffineGrid").Since(20).Types("T1", kFloatTypes).Build(), MakeFactory<AffineGrid>());
}

}  // namespace onyx
