// Element-wise preprocessing: Scaler, Normalizer, Binarizer, Imputer.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"

namespace onyx {
namespace {

const std::vector<DataType> kNumeric = {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32};

// Y = (X - offset) * scale in float; offset and scale hold one value or one
// per element of the last axis.
class Scaler final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Scaler>(new Scaler());
    k->offset_ = info.AttrOr<std::vector<float>>("offset", {});
    k->scale_ = info.AttrOr<std::vector<float>>("scale", {});
    if (k->offset_.empty() || k->offset_.size() != k->scale_.size()) {
      return info.Error(absl::StrCat("offset (", k->offset_.size(), " values) and scale (", k->scale_.size(),
                                     " values) must be set and equally long"));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    const int64_t last = x->rank() == 0 ? 1 : x->dims().back();
    const int64_t n = static_cast<int64_t>(scale_.size());
    if (n != 1 && n != last) {
      return ctx.Error(absl::StrCat("scale has ", n, " values; the input's last axis has ", last));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), DataType::kFloat));
    const std::vector<float> in = ToFloats(*x);
    float* out = y->mutable_data<float>();
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const int64_t j = n == 1 ? 0 : i % last;
      out[i] = (in[i] - offset_[j]) * scale_[j];
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> offset_, scale_;
};

// Each row divided by its max (MAX), sum of magnitudes (L1) or Euclidean norm
// (L2, sign kept); a row whose divisor is 0 is copied.
class Normalizer final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Normalizer>(new Normalizer());
    k->norm_ = info.AttrOr<std::string>("norm", "MAX");
    if (k->norm_ != "MAX" && k->norm_ != "L1" && k->norm_ != "L2") {
      return info.Error(absl::StrCat("norm '", k->norm_, "' is not one of MAX, L1, L2"));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    int64_t rows = 0, cols = 0;
    RETURN_IF_ERROR(RowsAndColumns(ctx, *x, &rows, &cols));
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), DataType::kFloat));
    const std::vector<float> in = ToFloats(*x);
    float* out = y->mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = in.data() + r * cols;
      float* o = out + r * cols;
      float d = 0.0f;
      if (norm_ == "MAX") {
        d = -std::numeric_limits<float>::max();
        for (int64_t c = 0; c < cols; ++c) d = std::max(d, row[c]);
      } else if (norm_ == "L1") {
        for (int64_t c = 0; c < cols; ++c) d += std::abs(row[c]);
      } else {
        for (int64_t c = 0; c < cols; ++c) d += row[c] * row[c];
      }
      for (int64_t c = 0; c < cols; ++c) {
        if (d == 0.0f) o[c] = row[c];
        else if (norm_ == "L2") o[c] = row[c] < 0 ? -std::sqrt(row[c] * row[c] / d) : std::sqrt(row[c] * row[c] / d);
        else o[c] = row[c] / d;
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string norm_;
};

// Y = X > threshold ? 1 : 0 in X's type; NaN is refused as ONNX Runtime does.
class Binarizer final : public OpKernel {
 public:
  explicit Binarizer(const OpKernelInfo& info) : threshold_(info.AttrOr<float>("threshold", 0.0f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), x->type()));
    switch (x->type()) {
      case DataType::kFloat: return Apply<float>(ctx, *x, y);
      case DataType::kDouble: return Apply<double>(ctx, *x, y);
      case DataType::kInt64: return Apply<int64_t>(ctx, *x, y);
      case DataType::kInt32: return Apply<int32_t>(ctx, *x, y);
      default: return ctx.Error(absl::StrCat("input type ", DataTypeName(x->type()), " is not supported"));
    }
  }

 private:
  template <typename T>
  absl::Status Apply(const OpKernelContext& ctx, const Tensor& x, Tensor* y) const {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const T v = x.data<T>()[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v)) return ctx.Error(absl::StrCat("input element ", i, " is NaN"));
      }
      y->mutable_data<T>()[i] = static_cast<double>(v) > threshold_ ? T(1) : T(0);
    }
    return absl::OkStatus();
  }

  float threshold_;
};

// Replaces elements equal to the replaced value (NaN matches NaN) by the
// imputed value of their column (or the single imputed value).
class Imputer final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Imputer>(new Imputer());
    k->floats_ = info.AttrOr<std::vector<float>>("imputed_value_floats", {});
    k->ints_ = info.AttrOr<std::vector<int64_t>>("imputed_value_int64s", {});
    k->replaced_float_ = info.AttrOr<float>("replaced_value_float", 0.0f);
    k->replaced_int_ = info.AttrOr<int64_t>("replaced_value_int64", 0);
    if (k->floats_.empty() == k->ints_.empty()) {
      return info.Error("exactly one of imputed_value_floats, imputed_value_int64s must be set");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), x->type()));
    switch (x->type()) {
      case DataType::kFloat: return Apply<float>(ctx, *x, floats_, replaced_float_, y);
      case DataType::kDouble: return Apply<double>(ctx, *x, floats_, replaced_float_, y);
      case DataType::kInt64: return Apply<int64_t>(ctx, *x, ints_, replaced_int_, y);
      case DataType::kInt32: return Apply<int32_t>(ctx, *x, ints_, replaced_int_, y);
      default: return ctx.Error(absl::StrCat("input type ", DataTypeName(x->type()), " is not supported"));
    }
  }

 private:
  template <typename T, typename V, typename R>
  absl::Status Apply(const OpKernelContext& ctx, const Tensor& x, const std::vector<V>& imputed, R replaced,
                     Tensor* y) const {
    if (imputed.empty()) {
      return ctx.Error(absl::StrCat("a ", DataTypeName(x.type()), " input needs imputed_value_",
                                    std::is_floating_point_v<T> ? "floats" : "int64s"));
    }
    const int64_t last = x.rank() == 0 ? 1 : x.dims().back();
    const int64_t n = static_cast<int64_t>(imputed.size());
    if (n != 1 && n != last) {
      return ctx.Error(absl::StrCat(n, " imputed values; the input's last axis has ", last));
    }
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const T v = x.data<T>()[i];
      bool hit = false;
      if constexpr (std::is_floating_point_v<T>) {
        hit = std::isnan(replaced) ? std::isnan(v) : v == static_cast<T>(replaced);
      } else {
        hit = v == static_cast<T>(replaced);
      }
      y->mutable_data<T>()[i] = hit ? static_cast<T>(imputed[n == 1 ? 0 : i % last]) : v;
    }
    return absl::OkStatus();
  }

  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_ = 0.0f;
  int64_t replaced_int_ = 0;
};

}  // namespace

void RegisterScaleKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Scaler").Domain(kMlDomain).Since(1).Types("T", kNumeric).Build(), MakeFactory<Scaler>());
  r.Register(KernelDefBuilder("Normalizer").Domain(kMlDomain).Since(1).Types("T", kNumeric).Build(),
             MakeFactory<Normalizer>());
  r.Register(KernelDefBuilder("Binarizer").Domain(kMlDomain).Since(1).Types("T", kNumeric).Build(),
             MakeFactory<Binarizer>());
  r.Register(KernelDefBuilder("Imputer").Domain(kMlDomain).Since(1).Types("T", kNumeric).Build(),
             MakeFactory<Imputer>());
}

}  // namespace onyx
