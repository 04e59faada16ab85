// Random generators: RandomNormal, RandomUniform, their *Like forms, Bernoulli
// and Multinomial. With a `seed` attribute every run draws the same values
// (a fresh std::mt19937 per run keeps Compute thread-safe and deterministic);
// without one each run is seeded from std::random_device.
#include <cmath>
#include <random>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

enum class Dist { kNormal, kUniform };

class RandomSource {
 public:
  explicit RandomSource(const OpKernelInfo& info)
      : seeded_(info.HasAttr("seed")), seed_(info.AttrOr<float>("seed", 0.0f)) {}
  std::mt19937 Engine() const {
    if (seeded_) return std::mt19937(static_cast<uint32_t>(static_cast<int64_t>(seed_)));
    std::random_device rd;
    return std::mt19937(rd());
  }

 private:
  bool seeded_;
  float seed_;
};

// Fills `out` (any float type) with draws, via a double buffer.
absl::Status FillRandom(Dist dist, double a, double b, std::mt19937& gen, Tensor& out) {
  Tensor d = Tensor::Allocate(DataType::kDouble, out.dims());
  double* p = d.mutable_data<double>();
  if (dist == Dist::kNormal) {
    std::normal_distribution<double> nd(a, b);
    for (int64_t i = 0; i < d.num_elements(); ++i) p[i] = nd(gen);
  } else {
    std::uniform_real_distribution<double> ud(a, b);
    for (int64_t i = 0; i < d.num_elements(); ++i) p[i] = ud(gen);
  }
  return CastElements(d, out);
}

class RandomKernel final : public OpKernel {
 public:
  RandomKernel(const OpKernelInfo& info, Dist dist, bool like)
      : source_(info), dist_(dist), like_(like),
        a_(dist == Dist::kNormal ? info.AttrOr<float>("mean", 0.0f) : info.AttrOr<float>("low", 0.0f)),
        b_(dist == Dist::kNormal ? info.AttrOr<float>("scale", 1.0f) : info.AttrOr<float>("high", 1.0f)),
        has_dtype_(info.HasAttr("dtype")),
        dtype_(static_cast<DataType>(info.AttrOr<int64_t>("dtype", static_cast<int64_t>(DataType::kFloat)))),
        shape_(info.AttrOr<std::vector<int64_t>>("shape", {})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    Dims dims(shape_.begin(), shape_.end());
    DataType type = dtype_;
    if (like_) {
      RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
      dims = ctx.Input(0)->dims();
      if (!has_dtype_) type = ctx.Input(0)->type();
    }
    if (type != DataType::kFloat && type != DataType::kDouble && type != DataType::kFloat16 &&
        type != DataType::kBFloat16) {
      return ctx.Error(absl::StrCat("dtype ", DataTypeName(type), " is not a floating-point type"));
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, dims, type));
    std::mt19937 gen = source_.Engine();
    return FillRandom(dist_, a_, b_, gen, *y);
  }

 private:
  RandomSource source_;
  Dist dist_;
  bool like_;
  double a_, b_;
  bool has_dtype_;
  DataType dtype_;
  std::vector<int64_t> shape_;
};

KernelFactory RandomFactory(Dist dist, bool like) {
  return [dist, like](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new RandomKernel(info, dist, like));
  };
}

class Bernoulli final : public OpKernel {
 public:
  explicit Bernoulli(const OpKernelInfo& info)
      : source_(info), has_dtype_(info.HasAttr("dtype")),
        dtype_(static_cast<DataType>(info.AttrOr<int64_t>("dtype", 0))) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    Tensor p = Tensor::Allocate(DataType::kDouble, x.dims());
    if (x.type() == DataType::kString || !CastElements(x, p).ok()) {
      return ctx.Error(absl::StrCat("input must be floating point, received ", DataTypeName(x.type())));
    }
    std::mt19937 gen = source_.Engine();
    std::uniform_real_distribution<double> ud(0.0, 1.0);
    double* v = p.mutable_data<double>();
    for (int64_t i = 0; i < p.num_elements(); ++i) v[i] = ud(gen) < v[i] ? 1.0 : 0.0;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), has_dtype_ ? dtype_ : x.type()));
    return CastElements(p, *y);
  }

 private:
  RandomSource source_;
  bool has_dtype_;
  DataType dtype_;
};

class Multinomial final : public OpKernel {
 public:
  explicit Multinomial(const OpKernelInfo& info)
      : source_(info), samples_(info.AttrOr<int64_t>("sample_size", 1)),
        dtype_(static_cast<DataType>(info.AttrOr<int64_t>("dtype", static_cast<int64_t>(DataType::kInt32)))) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    if (x.rank() != 2) {
      return ctx.Error(absl::StrCat("input must be [batch, classes], received ", DimsToString(x.dims())));
    }
    if (dtype_ != DataType::kInt32 && dtype_ != DataType::kInt64) {
      return ctx.Error(absl::StrCat("dtype ", DataTypeName(dtype_), " must be int32 or int64"));
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, {x.dims()[0], samples_}));
    if (samples_ < 0) return ctx.Error(absl::StrCat("sample_size ", samples_, " is negative"));
    Tensor logits = Tensor::Allocate(DataType::kDouble, x.dims());
    if (x.type() == DataType::kString || !CastElements(x, logits).ok()) {
      return ctx.Error(absl::StrCat("input must be floating point, received ", DataTypeName(x.type())));
    }
    const int64_t batch = x.dims()[0], classes = x.dims()[1];
    Tensor draws = Tensor::Allocate(DataType::kInt64, {batch, samples_});
    std::mt19937 gen = source_.Engine();
    for (int64_t b = 0; b < batch; ++b) {
      const double* l = logits.data<double>() + b * classes;
      double mx = -INFINITY;
      for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, l[c]);
      std::vector<double> w(classes);
      for (int64_t c = 0; c < classes; ++c) w[c] = std::exp(l[c] - mx);
      std::discrete_distribution<int64_t> dd(w.begin(), w.end());
      for (int64_t s = 0; s < samples_; ++s) draws.mutable_data<int64_t>()[b * samples_ + s] = dd(gen);
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {batch, samples_}, dtype_));
    return CastElements(draws, *y);
  }

 private:
  RandomSource source_;
  int64_t samples_;
  DataType dtype_;
};

}  // namespace

void RegisterRandomKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("RandomNormal").Since(1).Build(), RandomFactory(Dist::kNormal, false));
  r.Register(KernelDefBuilder("RandomUniform").Since(1).Build(), RandomFactory(Dist::kUniform, false));
  r.Register(KernelDefBuilder("RandomNormalLike").Since(1).Build(), RandomFactory(Dist::kNormal, true));
  r.Register(KernelDefBuilder("RandomUniformLike").Since(1).Build(), RandomFactory(Dist::kUniform, true));
  r.Register(KernelDefBuilder("Bernoulli").Since(15).Build(), MakeFactory<Bernoulli>());
  r.Register(KernelDefBuilder("Multinomial").Since(7).Build(), MakeFactory<Multinomial>());
}

}  // namespace onyx
