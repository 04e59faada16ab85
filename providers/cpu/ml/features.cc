// ArrayFeatureExtractor-1 and FeatureVectorizer-1.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"

namespace onyx {
namespace {

// Z[..., j] = X[..., Y[j]] over the flattened indices Y; a 1-D X is one row,
// so Z is [1, len(Y)].
class ArrayFeatureExtractor final : public OpKernel {
 public:
  explicit ArrayFeatureExtractor(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    const Tensor* y = ctx.Input(1);
    if (x == nullptr || y == nullptr) return ctx.Error("inputs X and Y are required");
    if (y->type() != DataType::kInt64) return ctx.Error("Y must be int64");
    if (x->rank() == 0) return ctx.Error("X must have at least one dimension");
    const int64_t last = x->dims().back();
    const int64_t n = y->num_elements();
    const int64_t* index = y->data<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      if (index[j] < 0 || index[j] >= last) {
        return ctx.Error(absl::StrCat("Y[", j, "] = ", index[j], " is outside [0, ", last, ")"));
      }
    }
    Dims dims = x->dims();
    if (x->rank() == 1) dims.insert(dims.begin(), 1);
    dims.back() = n;
    ASSIGN_OR_RETURN(Tensor * z, ctx.Output(0, dims, x->type()));
    const int64_t rows = x->num_elements() / std::max<int64_t>(last, 1);
    if (x->type() == DataType::kString) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          z->mutable_data<std::string>()[r * n + j] = x->data<std::string>()[r * last + index[j]];
        }
      }
      return absl::OkStatus();
    }
    const size_t width = ElementSize(x->type());
    const char* src = static_cast<const char*>(x->raw());
    char* dst = static_cast<char*>(z->mutable_raw());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j)
        std::memcpy(dst + (r * n + j) * width, src + (r * last + index[j]) * width, width);
    }
    return absl::OkStatus();
  }
};

// Concatenates the inputs' rows into float columns: input i fills
// inputdimensions[i] columns, truncated or padded with zeros. A 1-D input is
// one row; a row of a higher-rank input is everything after its first axis.
class FeatureVectorizer final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<FeatureVectorizer>(new FeatureVectorizer());
    k->dims_ = info.AttrOr<std::vector<int64_t>>("inputdimensions", {});
    if (static_cast<int>(k->dims_.size()) != info.InputCount()) {
      return info.Error(
          absl::StrCat("inputdimensions has ", k->dims_.size(), " entries for ", info.InputCount(), " inputs"));
    }
    for (int64_t d : k->dims_) {
      if (d < 0) return info.Error("inputdimensions must not be negative");
      k->total_ += d;
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    int64_t rows = -1;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      const Tensor* x = ctx.Input(i);
      if (x == nullptr) return ctx.Error(absl::StrCat("input ", i, " is missing"));
      const int64_t r = x->rank() <= 1 ? 1 : x->dims()[0];
      if (rows >= 0 && r != rows) return ctx.Error(absl::StrCat("input ", i, " has ", r, " rows, input 0 ", rows));
      rows = r;
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, {rows, total_}, DataType::kFloat));
    float* out = y->mutable_data<float>();
    std::fill(out, out + y->num_elements(), 0.0f);
    int64_t offset = 0;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      const Tensor& x = *ctx.Input(i);
      const std::vector<float> in = ToFloats(x);
      const int64_t stride = rows == 0 ? 0 : x.num_elements() / rows;
      const int64_t copy = std::min(stride, dims_[i]);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < copy; ++c) out[r * total_ + offset + c] = in[r * stride + c];
      }
      offset += dims_[i];
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> dims_;
  int64_t total_ = 0;
};

}  // namespace

void RegisterFeatureKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("ArrayFeatureExtractor").Domain(kMlDomain).Since(1).Build(),
             MakeFactory<ArrayFeatureExtractor>());
  r.Register(KernelDefBuilder("FeatureVectorizer").Domain(kMlDomain).Since(1).Build(),
             MakeFactory<FeatureVectorizer>());
}

}  // namespace onyx
