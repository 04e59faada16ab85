#include "server/models/bucket_sessions.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/memory.h"
#include "onyx/status_macros.h"
#include "spdlog/spdlog.h"

namespace onyx::server {
namespace {

// One session's fixed sizes: the batch bucket (0: none) and one size per padded dim.
struct SessionShape {
  int64_t bucket = 0;
  std::vector<int64_t> sizes;
  std::string Label() const {
    std::vector<int64_t> parts;
    if (bucket > 0) parts.push_back(bucket);
    parts.insert(parts.end(), sizes.begin(), sizes.end());
    return parts.empty() ? std::string("none") : absl::StrJoin(parts, "x");
  }
};

// Every session shape in SessionIndex order: batch-major, last padded dim fastest.
std::vector<SessionShape> SessionShapes(const std::vector<int64_t>& buckets,
                                        const std::vector<PaddedDim>& padded_dims) {
  std::vector<SessionShape> shapes;
  for (int64_t bucket : buckets.empty() ? std::vector<int64_t>{0} : buckets) {
    shapes.push_back(SessionShape{bucket, {}});
  }
  for (const PaddedDim& dim : padded_dims) {
    std::vector<SessionShape> next;
    for (const SessionShape& shape : shapes) {
      for (int64_t size : dim.sizes) {
        SessionShape more = shape;
        more.sizes.push_back(size);
        next.push_back(std::move(more));
      }
    }
    shapes = std::move(next);
  }
  return shapes;
}

absl::StatusOr<std::unique_ptr<onyx::InferenceSession>> CreateWarmSession(
    const BucketSessions::Options& options, const SessionShape& shape,
    const WarmupSamples& samples) {
  onyx::SessionOptions session_options = options.session_options;
  session_options.model_name = options.model_name;
  // Every bucket of this model file shares one copy of the weights.
  session_options.shared_weights_group = options.model_path;
  const std::string what = shape.bucket > 0 || !shape.sizes.empty()
                               ? absl::StrCat("bucket ", shape.Label())
                               : std::string("session");
  if (shape.bucket > 0 || !shape.sizes.empty()) {
    for (const onyx::ValueInfo& input : options.inputs) {
      std::vector<int64_t> dims(input.dims.size(), -1);
      if (shape.bucket > 0) {
        if (dims.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", input.name, "' has no batch dimension"));
        }
        dims[0] = shape.bucket;
      }
      for (size_t d = 0; d < options.padded_dims.size(); ++d) {
        for (const PaddedDim::Use& use : options.padded_dims[d].inputs) {
          if (use.tensor == input.name && use.axis < dims.size()) dims[use.axis] = shape.sizes[d];
        }
      }
      session_options.input_shape_overrides[input.name] = std::move(dims);
    }
  }
  auto session = onyx::InferenceSession::Create(options.model_path, session_options);
  if (!session.ok()) {
    return absl::Status(session.status().code(),
                        absl::StrCat(what, ": ", session.status().message()));
  }
  onyx::RunOptions run_options;
  run_options.run_tag = "warmup";
  if (options.warmup.runs > 0) {
    const onyx::Feeds feeds = WarmupFeeds((*session)->inputs(), options.warmup, samples);
    for (int64_t run = 0; run < options.warmup.runs; ++run) {
      auto warm = (*session)->Run(run_options, feeds, {});
      if (!warm.ok()) {
        return absl::Status(warm.status().code(),
                            absl::StrCat(what, ": warm-up run failed: ", warm.status().message()));
      }
    }
  }
  return std::move(*session);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BucketSessions>> BucketSessions::Create(const Options& options) {
  WarmupSamples samples;
  if (options.warmup.runs > 0 && options.warmup.inputs == WarmupSpec::Inputs::kSamples) {
    ASSIGN_OR_RETURN(samples,
                     LoadWarmupSamples(options.model_name, options.inputs, options.warmup.sample_dir));
  }
  std::vector<std::unique_ptr<onyx::InferenceSession>> sessions;
  for (const SessionShape& shape : SessionShapes(options.buckets, options.padded_dims)) {
    ASSIGN_OR_RETURN(auto session, CreateWarmSession(options, shape, samples));
    sessions.push_back(std::move(session));
  }
  return std::unique_ptr<BucketSessions>(
      new BucketSessions(options.model_name, options.buckets, options.padded_dims,
                         std::move(sessions)));
}

BucketSessions::BucketSessions(std::string model_name, std::vector<int64_t> buckets,
                               std::vector<PaddedDim> padded_dims,
                               std::vector<std::unique_ptr<onyx::InferenceSession>> sessions)
    : model_name_(std::move(model_name)),
      buckets_(std::move(buckets)),
      padded_dims_(std::move(padded_dims)),
      sessions_(std::move(sessions)),
      labels_([this] {
        std::vector<std::string> labels;
        for (const SessionShape& shape : SessionShapes(buckets_, padded_dims_)) labels.push_back(shape.Label());
        return labels;
      }()) {}

absl::StatusOr<std::vector<onyx::Value>> BucketSessions::Run(
    size_t bucket_index, const onyx::Feeds& feeds,
    const std::vector<std::string>& output_names) const {
  if (bucket_index >= sessions_.size()) {
    return absl::InternalError(absl::StrCat("no session for bucket index ", bucket_index));
  }
  auto outputs = sessions_[bucket_index]->Run(onyx::RunOptions(), feeds, output_names);
  if (!outputs.ok()) MaybeDumpArenas(outputs.status());
  return outputs;
}

void BucketSessions::MaybeDumpArenas(const absl::Status& status) const {
  if (!absl::IsResourceExhausted(status) || !arena_dumps_.Allow(absl::Now())) return;
  spdlog::error("model '{}': engine run failed ({}); arena state:\n{}", model_name_,
                std::string(status.message()), onyx::DumpArenaLogs());
}

const std::string& BucketSessions::bucket_label(size_t index) const {
  static const std::string none = "none";
  return index < labels_.size() ? labels_[index] : none;
}

}  // namespace onyx::server
