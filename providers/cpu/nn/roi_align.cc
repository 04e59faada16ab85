// RoiAlign: average or max of bilinear samples over a regular grid in each
// output bin of each region of interest. Opset 16's half_pixel mode shifts
// coordinates by -0.5; output_half_pixel (the opset 10 behaviour) does not and
// enforces regions of at least 1x1. Max mode takes, per sample, the largest
// weighted corner, as ONNX Runtime does.
#include <cmath>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class RoiAlign final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<RoiAlign>(new RoiAlign());
    const std::string mode = info.AttrOr<std::string>("mode", "avg");
    if (mode != "avg" && mode != "max") return info.Error("attribute 'mode' must be avg or max, received '" + mode + "'");
    k->max_ = mode == "max";
    k->out_h_ = info.AttrOr<int64_t>("output_height", 1);
    k->out_w_ = info.AttrOr<int64_t>("output_width", 1);
    k->sampling_ratio_ = info.AttrOr<int64_t>("sampling_ratio", 0);
    k->spatial_scale_ = info.AttrOr<float>("spatial_scale", 1.f);
    const std::string ctm = info.node().since_version >= 16
                                ? info.AttrOr<std::string>("coordinate_transformation_mode", "half_pixel")
                                : "output_half_pixel";
    if (ctm != "half_pixel" && ctm != "output_half_pixel") {
      return info.Error("attribute 'coordinate_transformation_mode' must be half_pixel or output_half_pixel");
    }
    k->half_pixel_ = ctm == "half_pixel";
    if (k->out_h_ <= 0 || k->out_w_ <= 0 || k->sampling_ratio_ < 0) {
      return info.Error("output_height and output_width must be positive and sampling_ratio non-negative");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* rois_in, RequireInput(ctx, 1, "rois"));
    ASSIGN_OR_RETURN(const Tensor* idx_in, RequireInput(ctx, 2, "batch_indices"));
    if (x_in->rank() != 4) return ctx.Error("X must be 4-D, received " + DimsToString(x_in->dims()));
    if (rois_in->rank() != 2 || rois_in->dims()[1] != 4) {
      return ctx.Error("rois must be [num_rois, 4], received " + DimsToString(rois_in->dims()));
    }
    const int64_t num_rois = rois_in->dims()[0];
    if (idx_in->num_elements() != num_rois) {
      return ctx.Error(absl::StrCat("batch_indices has ", idx_in->num_elements(), " values, expected ", num_rois));
    }
    const int64_t n = x_in->dims()[0], c = x_in->dims()[1], h = x_in->dims()[2], w = x_in->dims()[3];
    std::vector<int64_t> batch(num_rois);
    for (int64_t r = 0; r < num_rois; ++r) {
      batch[r] = ScalarAsInt64(*idx_in, r);
      if (batch[r] < 0 || batch[r] >= n) {
        return ctx.Error(absl::StrCat("batch_indices[", r, "] = ", batch[r], " is outside [0, ", n, ")"));
      }
    }
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kFloat));
    ASSIGN_OR_RETURN(Tensor rois, ConvertNumeric(*rois_in, DataType::kFloat));
    Tensor y = Tensor::Allocate(DataType::kFloat, {num_rois, c, out_h_, out_w_});
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    ParallelFor(num_rois * c, 1, [&](int64_t begin, int64_t end) {
      for (int64_t rc = begin; rc < end; ++rc) {
        const int64_t r = rc / c, ch = rc % c;
        const float* roi = rois.data<float>() + r * 4;
        const float offset = half_pixel_ ? 0.5f : 0.f;
        const float x0 = roi[0] * spatial_scale_ - offset, y0 = roi[1] * spatial_scale_ - offset;
        float rw = roi[2] * spatial_scale_ - offset - x0, rh = roi[3] * spatial_scale_ - offset - y0;
        if (!half_pixel_) {
          rw = std::max(rw, 1.f);
          rh = std::max(rh, 1.f);
        }
        const float bin_h = rh / out_h_, bin_w = rw / out_w_;
        const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rh / out_h_));
        const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rw / out_w_));
        const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
        const float* plane = px + (batch[r] * c + ch) * h * w;
        for (int64_t ph = 0; ph < out_h_; ++ph) {
          for (int64_t pw = 0; pw < out_w_; ++pw) {
            float acc = 0.f;
            bool first = true;
            for (int64_t iy = 0; iy < grid_h; ++iy) {
              const float sy = y0 + ph * bin_h + (iy + 0.5f) * bin_h / grid_h;
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                const float sx = x0 + pw * bin_w + (ix + 0.5f) * bin_w / grid_w;
                const float v = Sample(plane, h, w, sy, sx);
                if (max_) {
                  acc = first ? v : std::max(acc, v);
                  first = false;
                } else {
                  acc += v;
                }
              }
            }
            py[(rc * out_h_ + ph) * out_w_ + pw] = max_ ? acc : acc / count;
          }
        }
      }
    });
    ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(y, x_in->type()));
    ASSIGN_OR_RETURN(Tensor* out, ctx.Output(0, y.dims(), x_in->type()));
    std::memcpy(out->mutable_raw(), converted.raw(), out->byte_size());
    return absl::OkStatus();
  }

 private:
  RoiAlign() = default;

  // Bilinear sample (avg) or largest weighted corner (max); 0 outside [-1, size].
  float Sample(const float* plane, int64_t h, int64_t w, float y, float x) const {
    if (h <= 0 || w <= 0 || y < -1.f || y > h || x < -1.f || x > w) return 0.f;
    y = std::max(y, 0.f);
    x = std::max(x, 0.f);
    int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
    if (y_lo >= h - 1) {
      y_hi = y_lo = h - 1;
      y = static_cast<float>(y_lo);
    } else {
      y_hi = y_lo + 1;
    }
    if (x_lo >= w - 1) {
      x_hi = x_lo = w - 1;
      x = static_cast<float>(x_lo);
    } else {
      x_hi = x_lo + 1;
    }
    const float ly = y - y_lo, lx = x - x_lo, hy = 1.f - ly, hx = 1.f - lx;
    const float v1 = hy * hx * plane[y_lo * w + x_lo], v2 = hy * lx * plane[y_lo * w + x_hi];
    const float v3 = ly * hx * plane[y_hi * w + x_lo], v4 = ly * lx * plane[y_hi * w + x_hi];
    return max_ ? std::max(std::max(v1, v2), std::max(v3, v4)) : v1 + v2 + v3 + v4;
  }

  bool max_ = false;
  int64_t out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
  float spatial_scale_ = 1.f;
  bool half_pixel_ = true;
};

}  // namespace

void RegisterRoiAlignKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("RoiAlign").Since(10).Types("T1", kFloatTypes).Build(), MakeFactory<RoiAlign>());
}

}  // namespace onyx
