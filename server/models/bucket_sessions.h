// BucketSessions: one onyx::InferenceSession per batch bucket (× padded size of
// each padded dim) of a model, warmed.
//
//   BucketSessions::Options options;
//   options.model_name = "mlp";
//   options.model_path = "/models/mlp/3/model.onnx";
//   options.buckets = {1, 2, 4, 8};
//   options.inputs = probe->inputs();      // the graph inputs, batch dim first
//   ASSIGN_OR_RETURN(auto sessions, BucketSessions::Create(options));
//
// Each session is created with SessionOptions::input_shape_overrides fixing the
// first dimension of every input to its bucket and every padded axis to its
// size (other dims stay free), so the engine plans once per session. Sessions
// are laid out as SessionIndex (bucketed_model.h) says. Each is warmed before
// Create returns (warmup_inputs.h: how many runs, on what inputs).
// A run that fails with RESOURCE_EXHAUSTED logs the engine's arena dump
// (onyx::DumpArenaLogs), at most once per kArenaDumpInterval per model.
// Thread-safe: immutable after Create; InferenceSession::Run is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "onyx/session.h"
#include "server/models/rate_limiter.h"
#include "server/models/warmup_inputs.h"
#include "server/scheduling/bucketed_model.h"

namespace onyx::server {

class BucketSessions final : public BucketedModel {
 public:
  static constexpr absl::Duration kArenaDumpInterval = absl::Seconds(10);

  struct Options {
    std::string model_name;
    std::string model_path;
    // Strictly ascending; empty: one session with the model's own shapes.
    std::vector<int64_t> buckets;
    // The model's graph inputs (from a probe session); all have rank >= 1 when
    // buckets is non-empty.
    std::vector<onyx::ValueInfo> inputs;
    // Optional: dims padded to fixed sizes (one session per combination).
    std::vector<PaddedDim> padded_dims;
    // Base options for every session (providers, threads); input_shape_overrides
    // and model_name are set here.
    onyx::SessionOptions session_options;
    using Warmup = WarmupSpec;
    Warmup warmup;
  };

  // Errors: whatever InferenceSession::Create or a warm-up run returns,
  // prefixed with the bucket concerned; INVALID_ARGUMENT naming the model,
  // file and input for a missing or unfitting sample file.
  static absl::StatusOr<std::unique_ptr<BucketSessions>> Create(const Options& options);

  absl::Span<const int64_t> buckets() const override { return buckets_; }
  absl::Span<const PaddedDim> padded_dims() const override { return padded_dims_; }
  absl::StatusOr<std::vector<onyx::Value>> Run(
      size_t bucket_index, const onyx::Feeds& feeds,
      const std::vector<std::string>& output_names) const override;

  // The sessions, in SessionIndex order (one when the model has neither
  // buckets nor padded dims).
  size_t size() const { return sessions_.size(); }
  const onyx::InferenceSession& session(size_t index) const { return *sessions_[index]; }
  // How metrics and logs name session `index`: its batch size then each padded
  // size, joined by 'x' ("8", "8x128"; "128" without buckets), or "none" for the
  // single session of a model with neither.
  const std::string& bucket_label(size_t index) const;

 private:
  BucketSessions(std::string model_name, std::vector<int64_t> buckets,
                 std::vector<PaddedDim> padded_dims,
                 std::vector<std::unique_ptr<onyx::InferenceSession>> sessions);
  // Logs the arena dump for a RESOURCE_EXHAUSTED run unless one was logged
  // within kArenaDumpInterval.
  void MaybeDumpArenas(const absl::Status& status) const;

  const std::string model_name_;
  const std::vector<int64_t> buckets_;
  const std::vector<PaddedDim> padded_dims_;
  const std::vector<std::unique_ptr<onyx::InferenceSession>> sessions_;
  const std::vector<std::string> labels_;  // bucket_label(i), computed once
  mutable RateLimiter arena_dumps_{kArenaDumpInterval};
};

}  // namespace onyx::server
