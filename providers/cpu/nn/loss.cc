// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which applies
// log-softmax over the class axis first and may also return it), with
// per-class weights, ignore_index and reduction none / sum / mean (weighted:
// sum of losses over sum of the weights used).
#include <cmath>
#include <cstring>

#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

enum class Reduction { kNone, kSum, kMean };

template <bool kSoftmax>
class Loss final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const std::string r = info.AttrOr<std::string>("reduction", "mean");
    Reduction reduction;
    if (r == "none") reduction = Reduction::kNone;
    else if (r == "sum") reduction = Reduction::kSum;
    else if (r == "mean") reduction = Reduction::kMean;
    else return info.Error("attribute 'reduction' must be none, sum or mean, received '" + r + "'");
    return std::unique_ptr<OpKernel>(
        new Loss(reduction, info.HasAttr("ignore_index"), info.AttrOr<int64_t>("ignore_index", 0)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, kSoftmax ? "scores" : "input"));
    ASSIGN_OR_RETURN(const Tensor* target, RequireInput(ctx, 1, kSoftmax ? "labels" : "target"));
    const Tensor* weight_in = ctx.Input(2);
    if (x_in->rank() < 2) return ctx.Error("input must have rank >= 2, received " + DimsToString(x_in->dims()));
    const int64_t n = x_in->dims()[0], c = x_in->dims()[1];
    const int64_t d = c == 0 || n == 0 ? 0 : x_in->num_elements() / (n * c);
    Dims target_dims = {n};
    target_dims.insert(target_dims.end(), x_in->dims().begin() + 2, x_in->dims().end());
    if (target->dims() != target_dims || (target->type() != DataType::kInt32 && target->type() != DataType::kInt64)) {
      return ctx.Error(absl::StrCat("target must be int32/int64 of shape ", DimsToString(target_dims), ", received ",
                                    DataTypeName(target->type()), " ", DimsToString(target->dims())));
    }
    if (weight_in != nullptr && weight_in->num_elements() != c) {
      return ctx.Error(absl::StrCat("weight has ", weight_in->num_elements(), " values, expected ", c));
    }
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kDouble));
    const double* px = x.data<double>();
    Tensor log_prob;
    if (kSoftmax) {  // log-softmax over the class axis
      log_prob = Tensor::Allocate(DataType::kDouble, x.dims());
      double* lp = log_prob.mutable_data<double>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < d; ++j) {
          const double* src = px + i * c * d + j;
          double max = -INFINITY, sum = 0;
          for (int64_t k = 0; k < c; ++k) max = std::max(max, src[k * d]);
          for (int64_t k = 0; k < c; ++k) sum += std::exp(src[k * d] - max);
          const double log_sum = std::log(sum) + max;
          for (int64_t k = 0; k < c; ++k) lp[i * c * d + j + k * d] = src[k * d] - log_sum;
        }
      }
      px = log_prob.data<double>();
    }
    std::vector<double> weight(c, 1.0);
    for (int64_t k = 0; weight_in != nullptr && k < c; ++k) weight[k] = ScalarAsDouble(*weight_in, k);
    Tensor loss = Tensor::Allocate(DataType::kDouble, target_dims);
    double* pl = loss.mutable_data<double>();
    double loss_sum = 0, weight_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        const int64_t t = ScalarAsInt64(*target, i * d + j);
        if (has_ignore_ && t == ignore_index_) {
          pl[i * d + j] = 0;
          continue;
        }
        if (t < 0 || t >= c) {
          return ctx.Error(absl::StrCat("target value ", t, " at position ", i * d + j, " is outside [0, ", c, ")"));
        }
        pl[i * d + j] = -px[i * c * d + t * d + j] * weight[t];
        loss_sum += pl[i * d + j];
        weight_sum += weight[t];
      }
    }
    Tensor result = loss;
    if (reduction_ != Reduction::kNone) {
      result = Tensor::Allocate(DataType::kDouble, {});
      result.mutable_data<double>()[0] = reduction_ == Reduction::kSum ? loss_sum : loss_sum / weight_sum;
    }
    RETURN_IF_ERROR(Store(ctx, 0, result, x_in->type()));
    if (kSoftmax && ctx.OutputRequested(1)) RETURN_IF_ERROR(Store(ctx, 1, log_prob, x_in->type()));
    return absl::OkStatus();
  }

 private:
  Loss(Reduction reduction, bool has_ignore, int64_t ignore_index)
      : reduction_(reduction), has_ignore_(has_ignore), ignore_index_(ignore_index) {}

  static absl::Status Store(OpKernelContext& ctx, int index, const Tensor& value, DataType type) {
    ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(value, type));
    ASSIGN_OR_RETURN(Tensor* out, ctx.Output(index, value.dims(), type));
    std::memcpy(out->mutable_raw(), converted.raw(), out->byte_size());
    return absl::OkStatus();
  }

  Reduction reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

}  // namespace

void RegisterLossKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("NegativeLogLikelihoodLoss").Since(12).Build(), MakeFactory<Loss<false>>());
  r.Register(KernelDefBuilder("SoftmaxCrossEntropyLoss").Since(12).Build(), MakeFactory<Loss<true>>());
}

}  // namespace onyx
