#include "server/models/bucket_sessions.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"

namespace onyx::server {
namespace {

// Zero-filled feeds matching the session's (now fixed) input shapes.
onyx::Feeds WarmupFeeds(const onyx::InferenceSession& session) {
  onyx::Feeds feeds;
  for (const onyx::ValueInfo& input : session.inputs()) {
    std::vector<int64_t> dims = input.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    feeds.emplace_back(input.name, onyx::Value(onyx::Tensor::Allocate(input.type, dims)));
  }
  return feeds;
}

absl::StatusOr<std::unique_ptr<onyx::InferenceSession>> CreateWarmSession(
    const BucketSessions::Options& options, int64_t bucket) {
  onyx::SessionOptions session_options = options.session_options;
  session_options.model_name = options.model_name;
  // Every bucket of this model file shares one copy of the weights.
  session_options.shared_weights_group = options.model_path;
  const std::string what = bucket > 0 ? absl::StrCat("bucket ", bucket) : std::string("session");
  if (bucket > 0) {
    for (const onyx::ValueInfo& input : options.inputs) {
      std::vector<int64_t> dims(input.dims.size(), -1);
      if (dims.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", input.name, "' has no batch dimension"));
      }
      dims[0] = bucket;
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
  auto warm = (*session)->Run(run_options, WarmupFeeds(**session), {});
  if (!warm.ok()) {
    return absl::Status(warm.status().code(),
                        absl::StrCat(what, ": warm-up run failed: ", warm.status().message()));
  }
  return std::move(*session);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BucketSessions>> BucketSessions::Create(const Options& options) {
  std::vector<std::unique_ptr<onyx::InferenceSession>> sessions;
  if (options.buckets.empty()) {
    ASSIGN_OR_RETURN(auto session, CreateWarmSession(options, 0));
    sessions.push_back(std::move(session));
  }
  for (int64_t bucket : options.buckets) {
    ASSIGN_OR_RETURN(auto session, CreateWarmSession(options, bucket));
    sessions.push_back(std::move(session));
  }
  return std::unique_ptr<BucketSessions>(new BucketSessions(options.buckets, std::move(sessions)));
}

BucketSessions::BucketSessions(std::vector<int64_t> buckets,
                               std::vector<std::unique_ptr<onyx::InferenceSession>> sessions)
    : buckets_(std::move(buckets)), sessions_(std::move(sessions)) {}

absl::StatusOr<std::vector<onyx::Value>> BucketSessions::Run(
    size_t bucket_index, const onyx::Feeds& feeds,
    const std::vector<std::string>& output_names) const {
  if (bucket_index >= sessions_.size()) {
    return absl::InternalError(absl::StrCat("no session for bucket index ", bucket_index));
  }
  return sessions_[bucket_index]->Run(onyx::RunOptions(), feeds, output_names);
}

std::string BucketSessions::bucket_label(size_t index) const {
  return buckets_.empty() ? std::string("none") : absl::StrCat(buckets_[index]);
}

}  // namespace onyx::server
