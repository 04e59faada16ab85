// TfIdfVectorizer: counts the pool's n-grams (n in [min_gram_length,
// max_gram_length], tokens up to max_skip_count apart) in each row of int32,
// int64 or string tokens, then scales the counts per `mode` (TF, IDF, TFIDF).
// N-grams are looked up by a byte key (token values, or length-prefixed
// strings) in a hash map built once from the pool.
#include <cstring>
#include <string>
#include <unordered_map>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

void AppendToken(int64_t v, std::string* key) { key->append(reinterpret_cast<const char*>(&v), sizeof(v)); }
void AppendToken(const std::string& v, std::string* key) {
  AppendToken(static_cast<int64_t>(v.size()), key);
  key->append(v);
}

class TfIdfVectorizer final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<TfIdfVectorizer>(new TfIdfVectorizer());
    const std::string mode = info.AttrOr<std::string>("mode", "TF");
    if (mode == "TF") k->mode_ = TfIdfMode::kTf;
    else if (mode == "IDF") k->mode_ = TfIdfMode::kIdf;
    else if (mode == "TFIDF") k->mode_ = TfIdfMode::kTfIdf;
    else return info.Error(absl::StrCat("mode '", mode, "' is not one of TF, IDF, TFIDF"));
    k->min_n_ = info.AttrOr<int64_t>("min_gram_length", 1);
    k->max_n_ = info.AttrOr<int64_t>("max_gram_length", 1);
    k->max_skip_ = info.AttrOr<int64_t>("max_skip_count", 0);
    const auto counts = info.AttrOr<std::vector<int64_t>>("ngram_counts", {});
    const auto indexes = info.AttrOr<std::vector<int64_t>>("ngram_indexes", {});
    k->weights_ = info.AttrOr<std::vector<float>>("weights", {});
    const auto pool_ints = info.AttrOr<std::vector<int64_t>>("pool_int64s", {});
    const auto pool_strings = info.AttrOr<std::vector<std::string>>("pool_strings", {});
    k->string_pool_ = !pool_strings.empty();
    const int64_t pool_size = static_cast<int64_t>(k->string_pool_ ? pool_strings.size() : pool_ints.size());
    if (k->min_n_ < 1 || k->max_n_ < k->min_n_ || k->max_skip_ < 0) {
      return info.Error(absl::StrCat("invalid gram lengths [", k->min_n_, ", ", k->max_n_, "] or skip count ",
                                     k->max_skip_));
    }
    if (static_cast<int64_t>(counts.size()) < k->max_n_) {
      return info.Error(absl::StrCat("ngram_counts has ", counts.size(), " entries, max_gram_length is ", k->max_n_));
    }
    int64_t ordinal = 0;
    for (int64_t n = 1; n <= static_cast<int64_t>(counts.size()); ++n) {
      const int64_t begin = counts[n - 1];
      const int64_t end = n < static_cast<int64_t>(counts.size()) ? counts[n] : pool_size;
      if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) {
        return info.Error(
            absl::StrCat("ngram_counts entry ", n - 1, " does not describe whole ", n, "-grams of the pool"));
      }
      for (int64_t g = begin; g < end; g += n, ++ordinal) {
        if (ordinal >= static_cast<int64_t>(indexes.size()) || indexes[ordinal] < 0) {
          return info.Error(absl::StrCat("ngram_indexes has no valid entry for n-gram ", ordinal));
        }
        std::string key;
        for (int64_t t = g; t < g + n; ++t) {
          if (k->string_pool_) AppendToken(pool_strings[t], &key);
          else AppendToken(pool_ints[t], &key);
        }
        k->pool_[key] = indexes[ordinal];
        k->out_size_ = std::max(k->out_size_, indexes[ordinal] + 1);
      }
    }
    if (!k->weights_.empty() && static_cast<int64_t>(k->weights_.size()) < k->out_size_) {
      return info.Error(absl::StrCat("weights has ", k->weights_.size(), " entries, expected ", k->out_size_));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const bool is_string = x.type() == DataType::kString;
    if (is_string != string_pool_ || !(is_string || x.type() == DataType::kInt32 || x.type() == DataType::kInt64)) {
      return ctx.Error(absl::StrCat("input type ", DataTypeName(x.type()), " does not match the ",
                                    string_pool_ ? "string" : "integer", " pool"));
    }
    if (x.rank() > 2) return ctx.Error(absl::StrCat("input must be [C] or [N, C], received ", DimsToString(x.dims())));
    const int64_t rows = x.rank() == 2 ? x.dims()[0] : 1;
    const int64_t cols = x.rank() == 0 ? 1 : x.dims()[x.rank() - 1];
    Dims out_dims = x.rank() == 2 ? Dims{rows, out_size_} : Dims{out_size_};
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, DataType::kFloat));
    float* out = y->mutable_data<float>();
    std::fill(out, out + y->num_elements(), 0.0f);
    std::string key;
    for (int64_t r = 0; r < rows; ++r) {
      float* counts = out + r * out_size_;
      for (int64_t n = min_n_; n <= max_n_; ++n) {
        for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip_); ++skip) {
          const int64_t span = (n - 1) * (skip + 1);
          for (int64_t start = 0; start + span < cols; ++start) {
            key.clear();
            for (int64_t t = 0; t < n; ++t) {
              const int64_t i = r * cols + start + t * (skip + 1);
              if (is_string) AppendToken(x.data<std::string>()[i], &key);
              else if (x.type() == DataType::kInt32) AppendToken(static_cast<int64_t>(x.data<int32_t>()[i]), &key);
              else AppendToken(x.data<int64_t>()[i], &key);
            }
            auto it = pool_.find(key);
            if (it != pool_.end()) counts[it->second] += 1.0f;
          }
        }
      }
      for (int64_t j = 0; j < out_size_; ++j) {
        const float w = weights_.empty() ? 1.0f : weights_[j];
        if (mode_ == TfIdfMode::kIdf) counts[j] = counts[j] > 0 ? w : 0.0f;
        else if (mode_ == TfIdfMode::kTfIdf) counts[j] *= w;
      }
    }
    return absl::OkStatus();
  }

 private:
  TfIdfVectorizer() = default;

  TfIdfMode mode_ = TfIdfMode::kTf;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, out_size_ = 0;
  bool string_pool_ = false;
  std::vector<float> weights_;
  std::unordered_map<std::string, int64_t> pool_;  // n-gram key -> output index
};

}  // namespace

void RegisterTfIdfVectorizerKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("TfIdfVectorizer").Since(9).Build(), MakeFactory<TfIdfVectorizer>());
}

}  // namespace onyx
