#include "server/scheduling/bucket_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "server/scheduling/batch_util.h"

namespace onyx::server {
namespace {

const onyx::Value* FindInput(const onyx::Feeds& feeds, const std::string& name) {
  for (const auto& [input_name, value] : feeds) {
    if (input_name == name) return &value;
  }
  return nullptr;
}

// True when axis `axis` of input `name` is padded along some padded dim.
bool IsPaddedAxis(const BucketedModel& model, const std::string& name, size_t axis) {
  for (const PaddedDim& dim : model.padded_dims()) {
    for (const PaddedDim::Use& use : dim.inputs) {
      if (use.tensor == name && use.axis == axis) return true;
    }
  }
  return false;
}

// The true length of each padded dim in `request`, in padded_dims() order.
absl::StatusOr<std::vector<int64_t>> PaddedLengths(const BucketedModel& model,
                                                   const InferenceRequest& request) {
  std::vector<int64_t> lengths;
  for (const PaddedDim& dim : model.padded_dims()) {
    int64_t length = -1;
    std::string first_input;
    for (const PaddedDim::Use& use : dim.inputs) {
      const onyx::Value* value = FindInput(request.inputs, use.tensor);
      if (value == nullptr || !value->is_tensor() || value->tensor().rank() <= use.axis) {
        return absl::InvalidArgumentError(absl::StrCat("input '", use.tensor,
                                                       "' must be a tensor with dimension '",
                                                       dim.name, "' at axis ", use.axis));
      }
      const int64_t here = value->tensor().dims()[use.axis];
      if (length >= 0 && here != length) {
        return absl::InvalidArgumentError(
            absl::StrCat("inputs '", first_input, "' and '", use.tensor, "' disagree on dimension '",
                         dim.name, "': ", length, " vs ", here));
      }
      if (here > dim.sizes.back()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", use.tensor, "' dimension '", dim.name, "' (axis ", use.axis, ") is ", here,
            ", longer than the largest padded size ", dim.sizes.back()));
      }
      if (here < 1) {
        return absl::InvalidArgumentError(absl::StrCat("input '", use.tensor, "' dimension '",
                                                       dim.name, "' is ", here,
                                                       "; expected at least 1"));
      }
      length = here;
      first_input = use.tensor;
    }
    lengths.push_back(length);
  }
  return lengths;
}

// Index of the smallest size >= length (PaddedLengths checked the limit).
size_t SizeIndex(const PaddedDim& dim, int64_t length) {
  return static_cast<size_t>(std::lower_bound(dim.sizes.begin(), dim.sizes.end(), length) -
                             dim.sizes.begin());
}

// `request`'s inputs with every padded axis extended to its padded size.
absl::StatusOr<onyx::Feeds> PadInputs(const BucketedModel& model, const InferenceRequest& request,
                                      absl::Span<const size_t> size_indexes) {
  onyx::Feeds feeds = request.inputs;
  const absl::Span<const PaddedDim> dims = model.padded_dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t size = dims[d].sizes[size_indexes[d]];
    for (const PaddedDim::Use& use : dims[d].inputs) {
      for (auto& [name, value] : feeds) {
        if (name != use.tensor) continue;
        ASSIGN_OR_RETURN(onyx::Tensor padded,
                         PadAxis(value.tensor(), use.axis, size, use.pad_value));
        value = onyx::Value(std::move(padded));
      }
    }
  }
  return feeds;
}

// The stacked, batch-padded feeds (input order of the first request).
absl::StatusOr<onyx::Feeds> StackInputs(const std::vector<const onyx::Feeds*>& parts_by_request,
                                        absl::Span<const InferenceRequest* const> requests,
                                        int64_t bucket) {
  onyx::Feeds stacked;
  stacked.reserve(parts_by_request.front()->size());
  for (const auto& [name, unused] : *parts_by_request.front()) {
    std::vector<onyx::Tensor> parts;
    parts.reserve(requests.size());
    for (size_t r = 0; r < requests.size(); ++r) {
      const onyx::Value* value = FindInput(*parts_by_request[r], name);
      if (value == nullptr || !value->is_tensor() || value->tensor().rank() < 1 ||
          value->tensor().dims()[0] != requests[r]->batch_size) {
        return absl::InvalidArgumentError(absl::StrCat("input '", name, "' must be a tensor with ",
                                                       requests[r]->batch_size, " rows"));
      }
      parts.push_back(value->tensor());
    }
    ASSIGN_OR_RETURN(onyx::Tensor t, ConcatAndPad(parts, bucket));
    stacked.emplace_back(name, onyx::Value(std::move(t)));
  }
  return stacked;
}

// Cuts each padded output axis of `result` back to the request's true length.
absl::Status SliceOutputs(const BucketedModel& model, const InferenceRequest& request,
                          absl::Span<const int64_t> lengths, absl::Span<const size_t> size_indexes,
                          InferenceResult& result) {
  const absl::Span<const PaddedDim> dims = model.padded_dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    for (const PaddedDim::Use& use : dims[d].outputs) {
      for (size_t i = 0; i < request.output_names.size(); ++i) {
        if (request.output_names[i] != use.tensor) continue;
        onyx::Tensor& out = result.outputs[i];
        if (out.rank() <= use.axis || out.dims()[use.axis] != dims[d].sizes[size_indexes[d]]) {
          return absl::InternalError(absl::StrCat(
              "output '", use.tensor, "' does not have the padded size ",
              dims[d].sizes[size_indexes[d]], " of dimension '", dims[d].name, "' at axis ",
              use.axis, ": ", onyx::DimsToString(out.dims())));
        }
        ASSIGN_OR_RETURN(out, SliceAxis(out, use.axis, lengths[d]));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<InferenceResult>> ToResults(const InferenceRequest& request,
                                                       std::vector<onyx::Value> values) {
  InferenceResult result;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_tensor()) {
      return absl::InternalError(
          absl::StrCat("output '", request.output_names[i], "' is not a tensor"));
    }
    result.outputs.push_back(std::move(values[i].mutable_tensor()));
  }
  std::vector<InferenceResult> results;
  results.push_back(std::move(result));
  return results;
}

bool SameNonPaddedShapes(const BucketedModel* model, const InferenceRequest& a,
                         const InferenceRequest& b) {
  if (a.batch_size < 1 || b.batch_size < 1 || a.output_names != b.output_names ||
      a.inputs.size() != b.inputs.size()) {
    return false;
  }
  for (const auto& [name, value] : a.inputs) {
    const onyx::Value* other = FindInput(b.inputs, name);
    if (other == nullptr || !value.is_tensor() || !other->is_tensor()) return false;
    const onyx::Tensor& x = value.tensor();
    const onyx::Tensor& y = other->tensor();
    if (x.type() != y.type() || x.rank() != y.rank() || x.rank() < 1) return false;
    for (size_t axis = 1; axis < x.rank(); ++axis) {
      if (x.dims()[axis] == y.dims()[axis]) continue;
      if (model == nullptr || !IsPaddedAxis(*model, name, axis)) return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<size_t>> PaddedSizeIndexes(const BucketedModel& model,
                                                      const InferenceRequest& request) {
  ASSIGN_OR_RETURN(std::vector<int64_t> lengths, PaddedLengths(model, request));
  std::vector<size_t> indexes;
  const absl::Span<const PaddedDim> dims = model.padded_dims();
  for (size_t d = 0; d < dims.size(); ++d) indexes.push_back(SizeIndex(dims[d], lengths[d]));
  return indexes;
}

bool CanShareBatch(const InferenceRequest& a, const InferenceRequest& b) {
  return SameNonPaddedShapes(nullptr, a, b);
}

bool CanShareBatch(const BucketedModel& model, const InferenceRequest& a,
                   const InferenceRequest& b) {
  if (model.padded_dims().empty()) return CanShareBatch(a, b);
  if (!SameNonPaddedShapes(&model, a, b)) return false;
  absl::StatusOr<std::vector<size_t>> x = PaddedSizeIndexes(model, a);
  absl::StatusOr<std::vector<size_t>> y = PaddedSizeIndexes(model, b);
  return x.ok() && y.ok() && *x == *y;
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
  ASSIGN_OR_RETURN(const std::vector<int64_t> first_lengths, PaddedLengths(model, first));
  std::vector<size_t> size_indexes;
  for (size_t d = 0; d < first_lengths.size(); ++d) {
    size_indexes.push_back(SizeIndex(model.padded_dims()[d], first_lengths[d]));
  }
  std::vector<std::vector<int64_t>> lengths = {first_lengths};
  // Each request's feeds: its own inputs, or padded copies with padded dims.
  const bool pads = !model.padded_dims().empty();
  std::vector<onyx::Feeds> padded;
  std::vector<const onyx::Feeds*> feeds_of;
  padded.reserve(requests.size());
  for (const InferenceRequest* request : requests) {
    if (request != &first) {
      ASSIGN_OR_RETURN(std::vector<int64_t> own, PaddedLengths(model, *request));
      for (size_t d = 0; d < own.size(); ++d) {
        if (SizeIndex(model.padded_dims()[d], own[d]) != size_indexes[d]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "requests padded to different sizes of dimension '", model.padded_dims()[d].name,
              "' cannot share a batch"));
        }
      }
      lengths.push_back(std::move(own));
    }
    if (pads) {
      ASSIGN_OR_RETURN(onyx::Feeds feeds, PadInputs(model, *request, size_indexes));
      padded.push_back(std::move(feeds));
      feeds_of.push_back(&padded.back());
    } else {
      feeds_of.push_back(&request->inputs);
    }
  }

  if (model.buckets().empty()) {
    if (requests.size() != 1) {
      return absl::InvalidArgumentError("a model without buckets runs one request at a time");
    }
    ASSIGN_OR_RETURN(std::vector<onyx::Value> values,
                     model.Run(SessionIndex(model, 0, size_indexes), *feeds_of.front(),
                               first.output_names));
    ASSIGN_OR_RETURN(std::vector<InferenceResult> results, ToResults(first, std::move(values)));
    RETURN_IF_ERROR(SliceOutputs(model, first, first_lengths, size_indexes, results.front()));
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
  ASSIGN_OR_RETURN(onyx::Feeds stacked, StackInputs(feeds_of, requests, bucket));
  feeds_of.clear();
  padded.clear();

  ASSIGN_OR_RETURN(std::vector<onyx::Value> values,
                   model.Run(SessionIndex(model, index, size_indexes), stacked,
                             first.output_names));
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
    RETURN_IF_ERROR(SliceOutputs(model, *requests[r], lengths[r], size_indexes, results[r]));
    begin += requests[r]->batch_size;
  }
  return results;
}

}  // namespace onyx::server
