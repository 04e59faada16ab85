// OneHotEncoder-1 and CategoryMapper-1. Where a category is listed twice the
// later entry wins, as in ONNX Runtime's maps.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"

namespace onyx {
namespace {

// Output: the input's shape plus one axis of the categories, 1.0 at the
// category's index. Numbers are truncated to int64 before the lookup.
class OneHotEncoder final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<OneHotEncoder>(new OneHotEncoder());
    const auto ints = info.AttrOr<std::vector<int64_t>>("cats_int64s", {});
    const auto strings = info.AttrOr<std::vector<std::string>>("cats_strings", {});
    if (ints.empty() == strings.empty()) return info.Error("exactly one of cats_int64s, cats_strings must be set");
    for (size_t i = 0; i < ints.size(); ++i) k->ints_[ints[i]] = static_cast<int64_t>(i);
    for (size_t i = 0; i < strings.size(); ++i) k->strings_[strings[i]] = static_cast<int64_t>(i);
    k->count_ = static_cast<int64_t>(ints.size() + strings.size());
    k->zeros_ = info.AttrOr<int64_t>("zeros", 1) != 0;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    const bool is_string = x->type() == DataType::kString;
    if (is_string == strings_.empty()) {
      return ctx.Error(
          absl::StrCat("a ", DataTypeName(x->type()), " input needs cats_", is_string ? "strings" : "int64s"));
    }
    Dims dims = x->dims();
    dims.push_back(count_);
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, dims, DataType::kFloat));
    float* out = y->mutable_data<float>();
    std::fill(out, out + y->num_elements(), 0.0f);
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      int64_t index = -1;
      if (is_string) {
        auto it = strings_.find(x->data<std::string>()[i]);
        if (it != strings_.end()) index = it->second;
      } else {
        int64_t v = 0;
        switch (x->type()) {
          case DataType::kInt64: v = x->data<int64_t>()[i]; break;
          case DataType::kInt32: v = x->data<int32_t>()[i]; break;
          case DataType::kFloat: v = static_cast<int64_t>(x->data<float>()[i]); break;
          case DataType::kDouble: v = static_cast<int64_t>(x->data<double>()[i]); break;
          default: return ctx.Error(absl::StrCat("input type ", DataTypeName(x->type()), " is not supported"));
        }
        auto it = ints_.find(v);
        if (it != ints_.end()) index = it->second;
      }
      if (index >= 0) out[i * count_ + index] = 1.0f;
      else if (!zeros_) return ctx.Error(absl::StrCat("input element ", i, " is no category and zeros = 0"));
    }
    return absl::OkStatus();
  }

 private:
  std::unordered_map<int64_t, int64_t> ints_;
  std::unordered_map<std::string, int64_t> strings_;
  int64_t count_ = 0;
  bool zeros_ = true;
};

// Strings to int64 (default_int64 when absent) or int64 to strings
// (default_string), by the parallel lists cats_strings / cats_int64s.
class CategoryMapper final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<CategoryMapper>(new CategoryMapper());
    const auto ints = info.AttrOr<std::vector<int64_t>>("cats_int64s", {});
    const auto strings = info.AttrOr<std::vector<std::string>>("cats_strings", {});
    if (ints.size() != strings.size()) {
      return info.Error(absl::StrCat("cats_int64s has ", ints.size(), " values, cats_strings ", strings.size()));
    }
    for (size_t i = 0; i < ints.size(); ++i) {
      k->to_int_[strings[i]] = ints[i];
      k->to_string_[ints[i]] = strings[i];
    }
    k->default_int_ = info.AttrOr<int64_t>("default_int64", -1);
    k->default_string_ = info.AttrOr<std::string>("default_string", "_Unused");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    if (x->type() == DataType::kString) {
      ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), DataType::kInt64));
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        auto it = to_int_.find(x->data<std::string>()[i]);
        y->mutable_data<int64_t>()[i] = it == to_int_.end() ? default_int_ : it->second;
      }
      return absl::OkStatus();
    }
    if (x->type() != DataType::kInt64) {
      return ctx.Error(absl::StrCat("input must be string or int64, received ", DataTypeName(x->type())));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), DataType::kString));
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      auto it = to_string_.find(x->data<int64_t>()[i]);
      y->mutable_data<std::string>()[i] = it == to_string_.end() ? default_string_ : it->second;
    }
    return absl::OkStatus();
  }

 private:
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_string_;
  int64_t default_int_ = -1;
  std::string default_string_;
};

}  // namespace

void RegisterEncoderKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("OneHotEncoder").Domain(kMlDomain).Since(1).Build(), MakeFactory<OneHotEncoder>());
  r.Register(KernelDefBuilder("CategoryMapper").Domain(kMlDomain).Since(1).Build(), MakeFactory<CategoryMapper>());
}

}  // namespace onyx
