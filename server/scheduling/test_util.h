// Helpers shared by the scheduling tests: tensors from literals, a scripted
// BucketedModel and a FakeClock. Test-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/scheduling/bucketed_model.h"
#include "server/scheduling/clock.h"

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
  absl::Span<const PaddedDim> padded_dims() const override { return padded_dims_; }
  // Call before sharing the model with other threads.
  void set_padded_dims(std::vector<PaddedDim> dims) { padded_dims_ = std::move(dims); }

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
  std::vector<PaddedDim> padded_dims_;
  const RunFn run_;
  mutable absl::Mutex mu_;
  mutable std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
};

// A Clock whose time moves only by Advance(). Waits end when their condition
// holds or the fake time reaches their deadline; they re-check every
// millisecond of real time, so Advance() needs no hook into the waiter's mutex.
class FakeClock final : public Clock {
 public:
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                         absl::Time deadline) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    {
      absl::MutexLock lock(&mu_);
      waiting_.push_back(deadline);
    }
    bool result = false;
    while (true) {
      if (condition.Eval()) {
        result = true;
        break;
      }
      if (Now() >= deadline) break;
      mu->AwaitWithTimeout(condition, absl::Milliseconds(1));
    }
    absl::MutexLock lock(&mu_);
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), deadline));
    return result;
  }

  // Blocks (up to 10 s of real time) until some thread waits on this clock with
  // exactly `deadline`; false on timeout.
  bool AwaitWaiter(absl::Time deadline) const {
    absl::MutexLock lock(&mu_);
    auto waiting = [this, deadline]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find(waiting_.begin(), waiting_.end(), deadline) != waiting_.end();
    };
    return mu_.AwaitWithTimeout(absl::Condition(&waiting), absl::Seconds(10));
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(1000000);
  mutable std::vector<absl::Time> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::server::testing
