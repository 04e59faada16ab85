// LRN (across channels), MeanVarianceNormalization (over `axes`) and
// LpNormalization (L1/L2 along one axis). float16/bfloat16 compute in float.
#include <cmath>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/reduce_plan.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class LRN final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(int64_t size, info.Attr<int64_t>("size"));
    if (size <= 0) return info.Error(absl::StrCat("attribute 'size' must be positive, received ", size));
    return std::unique_ptr<OpKernel>(new LRN(info, size));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    if (x_in->rank() < 3) return ctx.Error("X must have rank >= 3, received " + DimsToString(x_in->dims()));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x_in->dims(), x_in->type()));
    const Tensor x = UpcastToFloat(*x_in);
    Tensor yc = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, x.dims()) : *y;
    const int64_t batch = x.dims()[0], channels = x.dims()[1];
    const int64_t spatial = NumElements(absl::MakeConstSpan(x.dims()).subspan(2));
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    absl::Status s = DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = yc.mutable_data<T>();
      ParallelFor(batch * channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<T> sum(spatial);
        for (int64_t nc = begin; nc < end; ++nc) {
          const int64_t n = nc / channels, c = nc % channels;
          std::fill(sum.begin(), sum.end(), T(0));
          for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(channels - 1, c + after); ++j) {
            const T* src = px + (n * channels + j) * spatial;
            for (int64_t i = 0; i < spatial; ++i) sum[i] += src[i] * src[i];
          }
          const T* src = px + nc * spatial;
          T* dst = py + nc * spatial;
          const T k = static_cast<T>(alpha_ / size_);
          for (int64_t i = 0; i < spatial; ++i) {
            dst[i] = src[i] / static_cast<T>(std::pow(bias_ + k * sum[i], beta_));
          }
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x_in->type())) DowncastFromFloat(yc, *y);
    return absl::OkStatus();
  }

 private:
  LRN(const OpKernelInfo& info, int64_t size)
      : size_(size),
        alpha_(info.AttrOr<float>("alpha", 1e-4f)),
        beta_(info.AttrOr<float>("beta", 0.75f)),
        bias_(info.AttrOr<float>("bias", 1.0f)) {}

  int64_t size_;
  float alpha_;
  float beta_;
  float bias_;
};

class MeanVarianceNormalization final : public OpKernel {
 public:
  explicit MeanVarianceNormalization(const OpKernelInfo& info)
      : axes_(info.AttrOr<std::vector<int64_t>>("axes", {0, 2, 3})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    auto axes = NormalizeAxes(axes_, x_in->rank());
    if (!axes.ok()) return ctx.Error(axes.status().message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x_in->dims(), x_in->type()));
    const Tensor x = UpcastToFloat(*x_in);
    Tensor yc = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, x.dims()) : *y;
    if (x.num_elements() == 0) return absl::OkStatus();
    const ReducePlan plan = ReducePlan::Make(x.dims(), *axes);
    const int64_t inner = plan.inner;
    const int64_t group = plan.inner_kept ? inner : 1;  // outputs per `keep` entry
    const double count = static_cast<double>(plan.reduced_count);
    absl::Status s = DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = yc.mutable_data<T>();
      ParallelFor(static_cast<int64_t>(plan.keep.size()), 1, [&](int64_t begin, int64_t end) {
        std::vector<double> sum(group), sq(group);
        for (int64_t k = begin; k < end; ++k) {
          std::fill(sum.begin(), sum.end(), 0.0);
          std::fill(sq.begin(), sq.end(), 0.0);
          for (int64_t r : plan.red) {
            const T* src = px + plan.keep[k] + r;
            for (int64_t l = 0; l < inner; ++l) {
              const double v = src[l];
              const int64_t g = plan.inner_kept ? l : 0;
              sum[g] += v;
              sq[g] += v * v;
            }
          }
          for (int64_t g = 0; g < group; ++g) {
            const double mean = sum[g] / count;
            const double stddev = std::sqrt(std::max(0.0, sq[g] / count - mean * mean));
            sum[g] = mean;
            sq[g] = 1.0 / (stddev + 1e-9);
          }
          for (int64_t r : plan.red) {
            const int64_t off = plan.keep[k] + r;
            for (int64_t l = 0; l < inner; ++l) {
              const int64_t g = plan.inner_kept ? l : 0;
              py[off + l] = static_cast<T>((px[off + l] - sum[g]) * sq[g]);
            }
          }
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x_in->type())) DowncastFromFloat(yc, *y);
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> axes_;
};

class LpNormalization final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const int64_t p = info.AttrOr<int64_t>("p", 2);
    if (p != 1 && p != 2) return info.Error(absl::StrCat("attribute 'p' must be 1 or 2, received ", p));
    return std::unique_ptr<OpKernel>(new LpNormalization(info.AttrOr<int64_t>("axis", -1), p));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "input"));
    auto axis = NormalizeAxis(axis_, x_in->rank());
    if (!axis.ok() || x_in->rank() == 0) return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x_in->rank()));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x_in->dims(), x_in->type()));
    const Tensor x = UpcastToFloat(*x_in);
    Tensor yc = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, x.dims()) : *y;
    int64_t outer = 1, inner = 1;
    const int64_t len = x.dims()[*axis];
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d < *axis) outer *= x.dims()[d];
      if (d > *axis) inner *= x.dims()[d];
    }
    absl::Status s = DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = yc.mutable_data<T>();
      ParallelFor(outer, 1, [&](int64_t begin, int64_t end) {
        std::vector<double> norm(inner);
        for (int64_t o = begin; o < end; ++o) {
          std::fill(norm.begin(), norm.end(), 0.0);
          const T* base = px + o * len * inner;
          for (int64_t j = 0; j < len; ++j) {
            for (int64_t i = 0; i < inner; ++i) {
              const double v = base[j * inner + i];
              norm[i] += p_ == 1 ? std::abs(v) : v * v;
            }
          }
          if (p_ == 2) {
            for (double& v : norm) v = std::sqrt(v);
          }
          for (int64_t j = 0; j < len; ++j) {
            for (int64_t i = 0; i < inner; ++i) {
              const int64_t at = o * len * inner + j * inner + i;
              py[at] = norm[i] == 0 ? T(0) : static_cast<T>(px[at] / norm[i]);
            }
          }
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x_in->type())) DowncastFromFloat(yc, *y);
    return absl::OkStatus();
  }

 private:
  LpNormalization(int64_t axis, int64_t p) : axis_(axis), p_(p) {}
  int64_t axis_;
  int64_t p_;
};

}  // namespace

void RegisterLocalNormKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("LRN").Since(1).Types("T", kFloatTypes).Build(), MakeFactory<LRN>());
  r.Register(KernelDefBuilder("MeanVarianceNormalization").Since(9).Types("T", kFloatTypes).Build(),
             MakeFactory<MeanVarianceNormalization>());
  r.Register(KernelDefBuilder("LpNormalization").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<LpNormalization>());
}

}  // namespace onyx
