// GridSample: X (N, C, D1, ..., Dr) sampled at the normalised locations of
// grid (N, D1_out, ..., Dr_out, r), whose last axis lists the coordinates
// innermost first (x indexes Dr). Linear (bi-/trilinear, and any r from 20)
// and nearest sampling on any number of spatial dims, bicubic on 2; zeros,
// border or reflection padding; align_corners. Opset 16 takes 4-D input
// only; opset 20 renamed the modes (bilinear -> linear, bicubic -> cubic)
// and both spellings are accepted. The coordinate conventions follow
// PyTorch's grid_sample, which the ONNX definition mirrors.
#include <cmath>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

enum class Mode { kLinear, kNearest, kCubic };
constexpr int kMaxRank = 8;  // spatial dims (Sample's fixed arrays)
enum class Padding { kZeros, kBorder, kReflection };

double Reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

// One plane of X and its spatial sizes, outermost first.
struct Plane {
  const double* data;
  const int64_t* dims;
  int rank;

  // The element at integer position `pos` (rank values), 0 outside.
  double At(const int64_t* pos) const {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      if (pos[d] < 0 || pos[d] >= dims[d]) return 0;
      offset = offset * dims[d] + pos[d];
    }
    return data[offset];
  }
};

class GridSample final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const bool opset20 = info.node().since_version >= 20;
    const std::string mode = info.AttrOr<std::string>("mode", opset20 ? "linear" : "bilinear");
    const std::string padding = info.AttrOr<std::string>("padding_mode", "zeros");
    auto k = std::unique_ptr<GridSample>(new GridSample());
    k->any_rank_ = opset20;
    if (mode == "bilinear" || mode == "linear") k->mode_ = Mode::kLinear;
    else if (mode == "nearest") k->mode_ = Mode::kNearest;
    else if (mode == "bicubic" || mode == "cubic") k->mode_ = Mode::kCubic;
    else return info.Error("attribute 'mode' must be linear, nearest or cubic, received '" + mode + "'");
    if (padding == "zeros") k->padding_ = Padding::kZeros;
    else if (padding == "border") k->padding_ = Padding::kBorder;
    else if (padding == "reflection") k->padding_ = Padding::kReflection;
    else return info.Error("attribute 'padding_mode' must be zeros, border or reflection, received '" + padding + "'");
    k->align_corners_ = info.AttrOr<int64_t>("align_corners", 0) != 0;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* grid_in, RequireInput(ctx, 1, "grid"));
    const int rank = static_cast<int>(x_in->rank()) - 2;
    if (rank < 1 || rank > kMaxRank || (!any_rank_ && rank != 2)) {
      return ctx.Error(absl::StrCat("X must be ", any_rank_ ? "(N, C, D1, ..., Dr)" : "4-D (N, C, H, W)", ", received ",
                                    DimsToString(x_in->dims())));
    }
    if (mode_ == Mode::kCubic && rank != 2) {
      return ctx.Error("cubic mode samples 4-D input (N, C, H, W) only, received " + DimsToString(x_in->dims()));
    }
    if (x_in->type() == DataType::kString || x_in->type() == DataType::kBool || x_in->type() == DataType::kComplex64 ||
        x_in->type() == DataType::kComplex128) {
      return ctx.Error(absl::StrCat("X of type ", DataTypeName(x_in->type()), " cannot be interpolated"));
    }
    const int64_t n = x_in->dims()[0], c = x_in->dims()[1];
    const Dims& gd = grid_in->dims();
    if (grid_in->rank() != rank + 2 || gd[0] != n || gd[rank + 1] != rank) {
      return ctx.Error(absl::StrCat("grid must be [", n, ", D1_out, ..., D", rank, "_out, ", rank, "] for X ",
                                    DimsToString(x_in->dims()), ", received ", DimsToString(gd)));
    }
    Dims out_dims = {n, c};
    int64_t positions = 1;  // per batch entry
    for (int d = 0; d < rank; ++d) {
      out_dims.push_back(gd[1 + d]);
      positions *= gd[1 + d];
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, out_dims, x_in->type()));
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kDouble));
    ASSIGN_OR_RETURN(Tensor grid, ConvertNumeric(*grid_in, DataType::kDouble));
    Tensor y = Tensor::Allocate(DataType::kDouble, out_dims);
    const int64_t* in_dims = x.dims().data() + 2;
    int64_t plane_size = 1;
    for (int d = 0; d < rank; ++d) plane_size *= in_dims[d];
    const double* px = x.data<double>();
    const double* pg = grid.data<double>();
    double* py = y.mutable_data<double>();
    ParallelFor(n * positions, 256, [&](int64_t begin, int64_t end) {
      std::vector<double> coord(rank);
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / positions, pos = p % positions;
        // grid lists x (the innermost axis) first.
        for (int d = 0; d < rank; ++d) coord[d] = Unnormalize(pg[p * rank + (rank - 1 - d)], in_dims[d]);
        for (int64_t ch = 0; ch < c; ++ch) {
          const Plane plane{px + (b * c + ch) * plane_size, in_dims, rank};
          py[(b * c + ch) * positions + pos] = Sample(plane, coord.data());
        }
      }
    });
    ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(y, x_in->type()));
    std::memcpy(y_out->mutable_raw(), converted.raw(), y_out->byte_size());
    return absl::OkStatus();
  }

 private:
  GridSample() = default;

  double Unnormalize(double v, int64_t size) const {
    return align_corners_ ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
  }

  // Applies border or reflection padding to a coordinate.
  double Pad(double v, int64_t size) const {
    if (padding_ == Padding::kBorder) return std::min(std::max(v, 0.0), static_cast<double>(size - 1));
    if (padding_ == Padding::kReflection) {
      v = align_corners_ ? Reflect(v, 0, 2.0 * (size - 1)) : Reflect(v, -1, 2.0 * size - 1);
      return std::min(std::max(v, 0.0), static_cast<double>(size - 1));
    }
    return v;
  }

  static void CubicWeights(double t, double out[4]) {
    constexpr double a = -0.75;
    auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    out[0] = far(t + 1);
    out[1] = near(t);
    out[2] = near(1 - t);
    out[3] = far(2 - t);
  }

  double Sample(const Plane& plane, const double* coord) const {
    const int rank = plane.rank;
    int64_t pos[kMaxRank];
    if (mode_ == Mode::kCubic) {  // rank 2: taps padded one by one around the unpadded location
      const double fy = std::floor(coord[0]), fx = std::floor(coord[1]);
      double wy[4], wx[4];
      CubicWeights(coord[0] - fy, wy);
      CubicWeights(coord[1] - fx, wx);
      double sum = 0;
      for (int i = 0; i < 4; ++i) {
        pos[0] = static_cast<int64_t>(Pad(fy - 1 + i, plane.dims[0]));
        for (int j = 0; j < 4; ++j) {
          pos[1] = static_cast<int64_t>(Pad(fx - 1 + j, plane.dims[1]));
          sum += wy[i] * wx[j] * plane.At(pos);
        }
      }
      return sum;
    }
    double padded[kMaxRank];
    for (int d = 0; d < rank; ++d) padded[d] = Pad(coord[d], plane.dims[d]);
    if (mode_ == Mode::kNearest) {
      for (int d = 0; d < rank; ++d) pos[d] = static_cast<int64_t>(std::nearbyint(padded[d]));
      return plane.At(pos);
    }
    // Linear: the 2^rank corners around the location, weighted per axis.
    int64_t low[kMaxRank];
    double frac[kMaxRank];
    for (int d = 0; d < rank; ++d) {
      const double f = std::floor(padded[d]);
      low[d] = static_cast<int64_t>(f);
      frac[d] = padded[d] - f;
    }
    double sum = 0;
    for (int corner = 0; corner < (1 << rank); ++corner) {
      double weight = 1;
      for (int d = 0; d < rank; ++d) {
        const bool high = (corner >> (rank - 1 - d)) & 1;
        pos[d] = low[d] + (high ? 1 : 0);
        weight *= high ? frac[d] : 1 - frac[d];
      }
      sum += weight * plane.At(pos);
    }
    return sum;
  }

  Mode mode_ = Mode::kLinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false;
  bool any_rank_ = false;  // opset 20: N-D input
};

}  // namespace

void RegisterGridSampleKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("GridSample").Since(16).Build(), MakeFactory<GridSample>());
}

}  // namespace onyx
