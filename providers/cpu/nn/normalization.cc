// BatchNormalization (inference and training_mode, per-channel or the old
// per-activation spatial=0 form), InstanceNormalization and
// LayerNormalization. All compute in float or double; float16/bfloat16 and
// mixed parameter types (opset 15) go through float.
#include <cmath>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

// A float view of `t` when it is float16/bfloat16/float, a double view when
// double; `want_double` converts everything to double instead.
absl::StatusOr<Tensor> AsCompute(const Tensor& t, bool want_double) {
  return ConvertNumeric(t, want_double ? DataType::kDouble : DataType::kFloat);
}

// Writes a computed float/double tensor into `out` of any float type.
absl::Status StoreResult(const Tensor& computed, Tensor& out) {
  ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(computed, out.type()));
  if (converted.raw() != out.raw()) std::memcpy(out.mutable_raw(), converted.raw(), out.byte_size());
  return absl::OkStatus();
}

// Where a kernel computes in `type`: `out` itself when it already has that
// type (no temporary, and StoreResult then copies nothing), else a temporary
// that StoreResult converts into `out`.
Tensor ComputeBuffer(const Tensor& out, DataType type) {
  return out.type() == type ? out : Tensor::Allocate(type, out.dims());
}

class BatchNormalization final : public OpKernel {
 public:
  explicit BatchNormalization(const OpKernelInfo& info)
      : epsilon_(info.AttrOr<float>("epsilon", 1e-5f)),
        momentum_(info.AttrOr<float>("momentum", 0.9f)),
        training_(info.AttrOr<int64_t>("training_mode", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    const Tensor* in[5];
    for (int i = 0; i < 5; ++i) {
      ASSIGN_OR_RETURN(in[i], RequireInput(ctx, i, kNames[i]));
    }
    const Tensor& x = *in[0];
    if (x.rank() < 2) return ctx.Error("X must have rank >= 2, received " + DimsToString(x.dims()));
    const int64_t batch = x.dims()[0], channels = x.dims()[1];
    const int64_t spatial = batch * channels == 0 ? 0 : x.num_elements() / (batch * channels);
    // Parameters are per channel, or per activation (spatial=0 before opset 9).
    const int64_t params = in[1]->num_elements();
    if (params != channels && params != channels * spatial) {
      return ctx.Error(absl::StrCat("scale has ", params, " values, expected ", channels, " (one per channel)"));
    }
    for (int i = 2; i < 5; ++i) {
      if (in[i]->num_elements() != params) {
        return ctx.Error(absl::StrCat(kNames[i], " has ", in[i]->num_elements(), " values, expected ", params));
      }
    }
    const bool dbl = x.type() == DataType::kDouble;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
    std::vector<Tensor> c(5);
    for (int i = 0; i < 5; ++i) {
      ASSIGN_OR_RETURN(c[i], AsCompute(*in[i], dbl));
    }
    Tensor yc = ComputeBuffer(*y, c[0].type());
    const int64_t inner = params == channels ? spatial : 1;  // elements sharing one parameter
    const int64_t per_image = channels * spatial;
    // Training mode: batch statistics per parameter, and updated running stats.
    std::vector<double> mean(params), var(params);
    return DispatchList(FloatCompute{}, c[0].type(), [&](auto tag) -> absl::Status {
      using T = decltype(tag);
      const T* px = c[0].data<T>();
      const T *scale = c[1].data<T>(), *bias = c[2].data<T>(), *in_mean = c[3].data<T>(), *in_var = c[4].data<T>();
      for (int64_t p = 0; p < params; ++p) {
        mean[p] = in_mean[p];
        var[p] = in_var[p];
      }
      if (training_) {
        const int64_t count = batch * (params == channels ? spatial : 1);
        std::vector<double> sum(params, 0.0), sq(params, 0.0);
        for (int64_t n = 0; n < batch; ++n) {
          for (int64_t e = 0; e < per_image; ++e) {
            const double v = px[n * per_image + e];
            sum[e / inner] += v;
            sq[e / inner] += v * v;
          }
        }
        for (int64_t p = 0; p < params; ++p) {
          mean[p] = count > 0 ? sum[p] / count : 0.0;
          var[p] = count > 0 ? sq[p] / count - mean[p] * mean[p] : 0.0;
        }
      }
      T* py = yc.mutable_data<T>();
      ParallelFor(batch * params, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)),
                  [&](int64_t begin, int64_t end) {
        for (int64_t bp = begin; bp < end; ++bp) {
          const int64_t p = bp % params;
          const double a = scale[p] / std::sqrt(var[p] + epsilon_);
          const T mul = static_cast<T>(a), add = static_cast<T>(bias[p] - mean[p] * a);
          const T* src = px + bp * inner;
          T* dst = py + bp * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * mul + add;
        }
      });
      RETURN_IF_ERROR(StoreResult(yc, *y));
      // Outputs 1 and 2: running mean and variance (or the inputs' when not training).
      for (int o = 1; o <= 2; ++o) {
        if (!ctx.OutputRequested(o)) continue;
        ASSIGN_OR_RETURN(Tensor* out, ctx.Output(o, in[o + 2]->dims(), in[o + 2]->type()));
        Tensor stat = Tensor::Allocate(c[0].type(), in[o + 2]->dims());
        const T* running = o == 1 ? in_mean : in_var;
        const std::vector<double>& current = o == 1 ? mean : var;
        for (int64_t p = 0; p < params; ++p) {
          stat.mutable_data<T>()[p] =
              training_ ? static_cast<T>(running[p] * momentum_ + current[p] * (1.0 - momentum_)) : running[p];
        }
        RETURN_IF_ERROR(StoreResult(stat, *out));
      }
      // Outputs 3 and 4 (opsets < 14): saved mean and inverse standard deviation.
      for (int o = 3; o <= 4; ++o) {
        if (!ctx.OutputRequested(o)) continue;
        ASSIGN_OR_RETURN(Tensor* out, ctx.Output(o, in[1]->dims(), x.type()));
        Tensor stat = Tensor::Allocate(c[0].type(), in[1]->dims());
        for (int64_t p = 0; p < params; ++p) {
          stat.mutable_data<T>()[p] = static_cast<T>(o == 3 ? mean[p] : 1.0 / std::sqrt(var[p] + epsilon_));
        }
        RETURN_IF_ERROR(StoreResult(stat, *out));
      }
      return absl::OkStatus();
    });
  }

 private:
  float epsilon_;
  float momentum_;
  bool training_;
};

class InstanceNormalization final : public OpKernel {
 public:
  explicit InstanceNormalization(const OpKernelInfo& info) : epsilon_(info.AttrOr<float>("epsilon", 1e-5f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "input"));
    ASSIGN_OR_RETURN(const Tensor* s_in, RequireInput(ctx, 1, "scale"));
    ASSIGN_OR_RETURN(const Tensor* b_in, RequireInput(ctx, 2, "B"));
    if (x_in->rank() < 3) return ctx.Error("input must have rank >= 3, received " + DimsToString(x_in->dims()));
    const int64_t channels = x_in->dims()[1];
    if (s_in->num_elements() != channels || b_in->num_elements() != channels) {
      return ctx.Error(absl::StrCat("scale and B must have ", channels, " values, received ", s_in->num_elements(),
                                    " and ", b_in->num_elements()));
    }
    const bool dbl = x_in->type() == DataType::kDouble;
    ASSIGN_OR_RETURN(Tensor x, AsCompute(*x_in, dbl));
    ASSIGN_OR_RETURN(Tensor s, AsCompute(*s_in, dbl));
    ASSIGN_OR_RETURN(Tensor b, AsCompute(*b_in, dbl));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x_in->dims(), x_in->type()));
    Tensor yc = ComputeBuffer(*y, x.type());
    const int64_t planes = x.dims()[0] * channels;
    const int64_t size = planes == 0 ? 0 : x.num_elements() / planes;
    RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = yc.mutable_data<T>();
      ParallelFor(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, size)), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* src = px + p * size;
          T* dst = py + p * size;
          double sum = 0, sq = 0;
          for (int64_t i = 0; i < size; ++i) sum += src[i];
          const double mean = size > 0 ? sum / size : 0.0;
          for (int64_t i = 0; i < size; ++i) sq += (src[i] - mean) * (src[i] - mean);
          const double var = size > 0 ? sq / size : 0.0;
          const double a = s.data<T>()[p % channels] / std::sqrt(var + epsilon_);
          const T mul = static_cast<T>(a), add = static_cast<T>(b.data<T>()[p % channels] - mean * a);
          for (int64_t i = 0; i < size; ++i) dst[i] = src[i] * mul + add;
        }
      });
      return absl::OkStatus();
    }));
    return StoreResult(yc, *y);
  }

 private:
  float epsilon_;
};

class LayerNormalization final : public OpKernel {
 public:
  explicit LayerNormalization(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", -1)),
        epsilon_(info.AttrOr<float>("epsilon", 1e-5f)),
        mean_type_(info.OutputType(1)),
        inv_std_type_(info.OutputType(2)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* s_in, RequireInput(ctx, 1, "Scale"));
    const Tensor* b_in = ctx.Input(2);
    auto axis = NormalizeAxis(axis_, x_in->rank());
    if (!axis.ok() || x_in->rank() == 0)
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for X ", DimsToString(x_in->dims())));
    const Dims norm_dims(x_in->dims().begin() + *axis, x_in->dims().end());
    const int64_t len = NumElements(norm_dims);
    const int64_t rows = len == 0 ? 0 : x_in->num_elements() / len;
    const bool dbl = x_in->type() == DataType::kDouble;
    ASSIGN_OR_RETURN(Tensor x, AsCompute(*x_in, dbl));
    // Scale and B broadcast to the normalised shape.
    auto expand = [&](const Tensor* t, double fill, const char* name) -> absl::StatusOr<Tensor> {
      Tensor full = Tensor::Allocate(x.type(), norm_dims);
      if (t == nullptr) {
        RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
          using T = decltype(tag);
          std::fill(full.mutable_data<T>(), full.mutable_data<T>() + len, static_cast<T>(fill));
          return absl::OkStatus();
        }));
        return full;
      }
      auto shape = BroadcastShape(t->dims(), norm_dims);
      if (!shape.ok() || Dims(*shape) != norm_dims) {
        return ctx.Error(absl::StrCat(name, " of shape ", DimsToString(t->dims()), " does not broadcast to ",
                                      DimsToString(norm_dims)));
      }
      ASSIGN_OR_RETURN(Tensor tc, AsCompute(*t, dbl));
      if (tc.dims() == norm_dims) return tc;  // the usual case: nothing to broadcast
      RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
        using T = decltype(tag);
        Tensor zero = Tensor::Allocate(x.type(), {});
        BroadcastBinary<T, T>(tc, zero, full, [](T v, T) { return v; });
        return absl::OkStatus();
      }));
      return full;
    };
    ASSIGN_OR_RETURN(Tensor scale, expand(s_in, 1.0, "Scale"));
    ASSIGN_OR_RETURN(Tensor bias, expand(b_in, 0.0, "B"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x_in->dims(), x_in->type()));
    // Float without the statistics outputs (what inference graphs ask for):
    // oneDNN's vectorised primitive; the loop below sums in double, one
    // element at a time.
    if (x_in->type() == DataType::kFloat && !ctx.OutputRequested(1) && !ctx.OutputRequested(2)) {
      absl::Status status = DnnlLayerNormalization(x.data<float>(), rows, len, epsilon_, scale.data<float>(),
                                                   bias.data<float>(), y->mutable_data<float>());
      if (status.ok()) return status;
    }
    Dims stat_dims(x_in->dims().begin(), x_in->dims().begin() + *axis);
    while (static_cast<int64_t>(stat_dims.size()) < x_in->rank()) stat_dims.push_back(1);
    Tensor yc = ComputeBuffer(*y, x.type());
    // The statistics outputs are optional; without them nothing is allocated.
    Tensor mean_c = ctx.OutputRequested(1) ? Tensor::Allocate(x.type(), stat_dims) : Tensor();
    Tensor inv_c = ctx.OutputRequested(2) ? Tensor::Allocate(x.type(), stat_dims) : Tensor();
    RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T *px = x.data<T>(), *ps = scale.data<T>(), *pb = bias.data<T>();
      T* py = yc.mutable_data<T>();
      T* pmean = ctx.OutputRequested(1) ? mean_c.mutable_data<T>() : nullptr;
      T* pinv = ctx.OutputRequested(2) ? inv_c.mutable_data<T>() : nullptr;
      ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* src = px + r * len;
          T* dst = py + r * len;
          double sum = 0, sq = 0;
          for (int64_t i = 0; i < len; ++i) sum += src[i];
          const double mean = sum / len;
          for (int64_t i = 0; i < len; ++i) sq += (src[i] - mean) * (src[i] - mean);
          const double inv = 1.0 / std::sqrt(sq / len + epsilon_);
          const T m = static_cast<T>(mean), iv = static_cast<T>(inv);
          for (int64_t i = 0; i < len; ++i) dst[i] = (src[i] - m) * iv * ps[i] + pb[i];
          if (pmean != nullptr) pmean[r] = m;
          if (pinv != nullptr) pinv[r] = iv;
        }
      });
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(StoreResult(yc, *y));
    // Mean and InvStdDev have the model's declared type U (float by default).
    if (ctx.OutputRequested(1)) {
      ASSIGN_OR_RETURN(Tensor* out, ctx.Output(1, stat_dims, StatType(mean_type_)));
      RETURN_IF_ERROR(StoreResult(mean_c, *out));
    }
    if (ctx.OutputRequested(2)) {
      ASSIGN_OR_RETURN(Tensor* out, ctx.Output(2, stat_dims, StatType(inv_std_type_)));
      RETURN_IF_ERROR(StoreResult(inv_c, *out));
    }
    return absl::OkStatus();
  }

 private:
  static DataType StatType(DataType declared) { return declared == DataType::kUndefined ? DataType::kFloat : declared; }

  int64_t axis_;
  float epsilon_;
  DataType mean_type_;
  DataType inv_std_type_;
};

}  // namespace

void RegisterNormalizationKernels(KernelRegistry& r) {
  // Opsets 1-6 differ only in attributes inference ignores (is_test,
  // consumed_inputs); spatial = 0 shows as per-activation parameters.
  r.Register(KernelDefBuilder("BatchNormalization").Since(1, 6).Build(), MakeFactory<BatchNormalization>());
  r.Register(KernelDefBuilder("BatchNormalization").Since(7).Build(), MakeFactory<BatchNormalization>());
  r.Register(KernelDefBuilder("InstanceNormalization").Since(6).Types("T", kFloatTypes).Build(),
             MakeFactory<InstanceNormalization>());
  r.Register(KernelDefBuilder("LayerNormalization").Since(17).Build(), MakeFactory<LayerNormalization>());
}

}  // namespace onyx
