// GridSample (opset 16) on 4-D NCHW input: bilinear, nearest or bicubic
// sampling at normalised grid locations, with zeros, border or reflection
// padding and align_corners; the coordinate conventions follow PyTorch's
// grid_sample, which the ONNX definition mirrors.
#include <cmath>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

double Reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

class GridSample final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const std::string mode = info.AttrOr<std::string>("mode", "bilinear");
    const std::string padding = info.AttrOr<std::string>("padding_mode", "zeros");
    auto k = std::unique_ptr<GridSample>(new GridSample());
    if (mode == "bilinear" || mode == "linear") k->mode_ = Mode::kBilinear;
    else if (mode == "nearest") k->mode_ = Mode::kNearest;
    else if (mode == "bicubic" || mode == "cubic") k->mode_ = Mode::kBicubic;
    else return info.Error("attribute 'mode' must be bilinear, nearest or bicubic, received '" + mode + "'");
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
    if (x_in->rank() != 4) return ctx.Error("X must be 4-D [N, C, H, W], received " + DimsToString(x_in->dims()));
    const int64_t n = x_in->dims()[0], c = x_in->dims()[1], h = x_in->dims()[2], w = x_in->dims()[3];
    if (grid_in->rank() != 4 || grid_in->dims()[0] != n || grid_in->dims()[3] != 2) {
      return ctx.Error(absl::StrCat("grid must be [", n, ", H_out, W_out, 2], received ", DimsToString(grid_in->dims())));
    }
    const int64_t oh = grid_in->dims()[1], ow = grid_in->dims()[2];
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, {n, c, oh, ow}, x_in->type()));
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kDouble));
    ASSIGN_OR_RETURN(Tensor grid, ConvertNumeric(*grid_in, DataType::kDouble));
    Tensor y = Tensor::Allocate(DataType::kDouble, {n, c, oh, ow});
    const double* px = x.data<double>();
    const double* pg = grid.data<double>();
    double* py = y.mutable_data<double>();
    ParallelFor(n * oh * ow, 256, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / (oh * ow), pos = p % (oh * ow);
        const double gx = Unnormalize(pg[p * 2], w), gy = Unnormalize(pg[p * 2 + 1], h);
        for (int64_t ch = 0; ch < c; ++ch) {
          const double* plane = px + (b * c + ch) * h * w;
          py[(b * c + ch) * oh * ow + pos] = Sample(plane, h, w, gx, gy);
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

  static double At(const double* plane, int64_t h, int64_t w, int64_t y, int64_t x) {
    return (x >= 0 && x < w && y >= 0 && y < h) ? plane[y * w + x] : 0.0;
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

  double Sample(const double* plane, int64_t h, int64_t w, double gx, double gy) const {
    if (mode_ == Mode::kBicubic) {
      // Taps are padded individually around the unpadded location.
      const double fx = std::floor(gx), fy = std::floor(gy);
      double wx[4], wy[4];
      CubicWeights(gx - fx, wx);
      CubicWeights(gy - fy, wy);
      double sum = 0;
      for (int i = 0; i < 4; ++i) {
        const double ty = Pad(fy - 1 + i, h);
        for (int j = 0; j < 4; ++j) {
          const double tx = Pad(fx - 1 + j, w);
          sum += wy[i] * wx[j] * At(plane, h, w, static_cast<int64_t>(ty), static_cast<int64_t>(tx));
        }
      }
      return sum;
    }
    const double x = Pad(gx, w), y = Pad(gy, h);
    if (mode_ == Mode::kNearest) {
      return At(plane, h, w, static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
    }
    const double x0 = std::floor(x), y0 = std::floor(y);
    const double dx = x - x0, dy = y - y0;
    const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
    return (1 - dy) * ((1 - dx) * At(plane, h, w, iy, ix) + dx * At(plane, h, w, iy, ix + 1)) +
           dy * ((1 - dx) * At(plane, h, w, iy + 1, ix) + dx * At(plane, h, w, iy + 1, ix + 1));
  }

  Mode mode_ = Mode::kBilinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false;
};

}  // namespace

void RegisterGridSampleKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("GridSample").Since(16).Build(), MakeFactory<GridSample>());
}

}  // namespace onyx
