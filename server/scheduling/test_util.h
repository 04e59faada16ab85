// Helpers shared by the scheduling tests: tensors from literals and a scripted
// BucketedModel. Test-only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/scheduling/bucketed_model.h"

namespace onyx::server::testing {

inline onyx::Tensor FloatTensor(std::vector<int64_t> dims, std::vector<float> values) {
  onyx::Tensor t = onyx::Tensor::Allocate(onyx::DataType::kFloat, dims);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<float>()[i] = values[i];
  return t;
}

inline std::vector<float> FloatValues(const onyx::Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// A BucketedModel whose Run() is a test-supplied function; records every call.
class FakeModel : public BucketedModel {
 public:
  using RunFn = std::function<absl::StatusOr<std::vector<onyx::Value>>(
      size_t bucket_index, const onyx::Feeds& feeds, const std::vector<std::string>& outputs)>;

  FakeModel(std::vector<int64_t> buckets, RunFn run)
      : buckets_(std::move(buckets)), run_(std::move(run)) {}

  absl::Span<const int64_t> buckets() const override { return buckets_; }

  absl::StatusOr<std::vector<onyx::Value>> Run(
      size_t bucket_index, const onyx::Feeds& feeds,
      const std::vector<std::string>& outputs) const override {
    {
      absl::MutexLock lock(&mu_);
      calls_.push_back(Call{bucket_index, feeds});
    }
    return run_(bucket_index, feeds, outputs);
  }

  struct Call {
    size_t bucket_index;
    onyx::Feeds feeds;
  };
  std::vector<Call> calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  const std::vector<int64_t> buckets_;
  const RunFn run_;
  mutable absl::Mutex mu_;
  mutable std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server::testing
