#include "server/scheduling/bucket_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "server/scheduling/batch_util.h"

namespace onyx::server {
namespace {

const onyx::Value* FindInput(const InferenceRequest& request, const std::string& name) {
  for (const auto& [input_name, value] : request.inputs) {
    if (input_name == name) return &value;
  }
  return nullptr;
}

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

// The stacked, padded feeds of `requests` (input order of the first request).
absl::StatusOr<onyx::Feeds> StackInputs(absl::Span<const InferenceRequest* const> requests,
                                        int64_t bucket) {
  onyx::Feeds stacked;
  stacked.reserve(requests.front()->inputs.size());
  for (const auto& [name, unused] : requests.front()->inputs) {
    std::vector<onyx::Tensor> parts;
    parts.reserve(requests.size());
    for (const InferenceRequest* request : requests) {
      const onyx::Value* value = FindInput(*request, name);
      if (value == nullptr || !value->is_tensor() || value->tensor().rank() < 1 ||
          value->tensor().dims()[0] != request->batch_size) {
        return absl::InvalidArgumentError(absl::StrCat("input '", name, "' must be a tensor with ",
                                                       request->batch_size, " rows"));
      }
      parts.push_back(value->tensor());
    }
    ASSIGN_OR_RETURN(onyx::Tensor t, ConcatAndPad(parts, bucket));
    stacked.emplace_back(name, onyx::Value(std::move(t)));
  }
  return stacked;
}

}  // namespace

bool CanShareBatch(const InferenceRequest& a, const InferenceRequest& b) {
  if (a.batch_size < 1 || b.batch_size < 1 || a.output_names != b.output_names ||
      a.inputs.size() != b.inputs.size()) {
    return false;
  }
  for (const auto& [name, value] : a.inputs) {
    const onyx::Value* other = FindInput(b, name);
    if (other == nullptr || !value.is_tensor() || !other->is_tensor()) return false;
    const onyx::Tensor& x = value.tensor();
    const onyx::Tensor& y = other->tensor();
    if (x.type() != y.type() || x.rank() != y.rank() || x.rank() < 1 ||
        !std::equal(x.dims().begin() + 1, x.dims().end(), y.dims().begin() + 1)) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<InferenceResult> RunOnBucket(const BucketedModel& model,
                                            const InferenceRequest& request) {
  const InferenceRequest* one[] = {&request};
  ASSIGN_OR_RETURN(std::vector<InferenceResult> results, RunBatchOnBucket(model, one));
  return std::move(results.front());
}

absl::StatusOr<std::vector<InferenceResult>> RunBatchOnBucket(
    const BucketedModel& model, absl::Span<const InferenceRequest* const> requests) {
  if (requests.empty()) return absl::InvalidArgumentError("RunBatchOnBucket: no requests");
  const InferenceRequest& first = *requests.front();
  if (model.buckets().empty()) {
    if (requests.size() != 1) {
      return absl::InvalidArgumentError("a model without buckets runs one request at a time");
    }
    ASSIGN_OR_RETURN(InferenceResult result, RunUnbatched(model, first));
    std::vector<InferenceResult> results;
    results.push_back(std::move(result));
    return results;
  }
  int64_t rows = 0;
  for (const InferenceRequest* request : requests) {
    if (request->batch_size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch size ", request->batch_size, " for a batched model"));
    }
    rows += request->batch_size;
  }
  ASSIGN_OR_RETURN(const size_t index, ChooseBucket(model.buckets(), rows));
  const int64_t bucket = model.buckets()[index];
  ASSIGN_OR_RETURN(onyx::Feeds stacked, StackInputs(requests, bucket));

  ASSIGN_OR_RETURN(std::vector<onyx::Value> values, model.Run(index, stacked, first.output_names));
  if (values.size() != first.output_names.size()) {
    return absl::InternalError(absl::StrCat("model returned ", values.size(), " outputs, expected ",
                                            first.output_names.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const onyx::Value& v = values[i];
    if (!v.is_tensor() || v.tensor().rank() < 1 || v.tensor().dims()[0] != bucket) {
      return absl::InternalError(absl::StrCat("output '", first.output_names[i],
                                              "' does not have the batch size ", bucket,
                                              " as its first dimension"));
    }
  }
  std::vector<InferenceResult> results(requests.size());
  int64_t begin = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    results[r].outputs.reserve(values.size());
    for (const onyx::Value& v : values) {
      ASSIGN_OR_RETURN(onyx::Tensor rows_of_r,
                       SliceRows(v.tensor(), begin, requests[r]->batch_size));
      results[r].outputs.push_back(std::move(rows_of_r));
    }
    begin += requests[r]->batch_size;
  }
  return results;
}

}  // namespace onyx::server
