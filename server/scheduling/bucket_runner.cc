#include "server/scheduling/bucket_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "server/scheduling/batch_util.h"

namespace onyx::server {
namespace {

absl::StatusOr<InferenceResult> RunUnbatched(const BucketedModel& model,
                                             const InferenceRequest& request) {
  ASSIGN_OR_RETURN(std::vector<onyx::Value> values,
                   model.Run(0, request.inputs, request.output_names));
  InferenceResult result;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_tensor()) {
      return absl::InternalError(
          absl::StrCat("output '", request.output_names[i], "' is not a tensor"));
    }
    result.outputs.push_back(std::move(values[i].mutable_tensor()));
  }
  return result;
}

}  // namespace

absl::StatusOr<InferenceResult> RunOnBucket(const BucketedModel& model,
                                            const InferenceRequest& request) {
  if (model.buckets().empty()) return RunUnbatched(model, request);
  ASSIGN_OR_RETURN(const size_t index, ChooseBucket(model.buckets(), request.batch_size));
  const int64_t bucket = model.buckets()[index];

  onyx::Feeds padded;
  padded.reserve(request.inputs.size());
  for (const auto& [name, value] : request.inputs) {
    if (!value.is_tensor() || value.tensor().rank() < 1 ||
        value.tensor().dims()[0] != request.batch_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' must be a tensor with ", request.batch_size, " rows"));
    }
    ASSIGN_OR_RETURN(onyx::Tensor t, ConcatAndPad({value.tensor()}, bucket));
    padded.emplace_back(name, onyx::Value(std::move(t)));
  }

  ASSIGN_OR_RETURN(std::vector<onyx::Value> values, model.Run(index, padded, request.output_names));
  if (values.size() != request.output_names.size()) {
    return absl::InternalError(absl::StrCat("model returned ", values.size(), " outputs, expected ",
                                            request.output_names.size()));
  }
  InferenceResult result;
  result.outputs.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const onyx::Value& v = values[i];
    if (!v.is_tensor() || v.tensor().rank() < 1 || v.tensor().dims()[0] != bucket) {
      return absl::InternalError(absl::StrCat("output '", request.output_names[i],
                                              "' does not have the batch size ", bucket,
                                              " as its first dimension"));
    }
    ASSIGN_OR_RETURN(onyx::Tensor sliced, SliceRows(v.tensor(), 0, request.batch_size));
    result.outputs.push_back(std::move(sliced));
  }
  return result;
}

}  // namespace onyx::server
