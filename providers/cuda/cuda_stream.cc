#include "providers/cuda/cuda_stream.h"

#include "common/logging.h"

namespace onyx {

absl::StatusOr<std::unique_ptr<DeviceLane>> LanePool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<DeviceLane> lane = std::move(idle_.back());
      idle_.pop_back();
      return lane;
    }
  }
  // Created outside the lock: making streams and library handles is slow.
  absl::StatusOr<std::unique_ptr<DeviceLane>> lane =
      DeviceLane::Create(DeviceLane::Config{options_.runtime, options_.staging, options_.lane, options_.resources});
  if (lane.ok()) {
    absl::MutexLock lock(&mu_);
    ++created_;
  }
  return lane;
}

void LanePool::Release(std::unique_ptr<DeviceLane> lane) {
  if (lane == nullptr) return;
  absl::Status synced;
  {
    ScopedDevice device(*options_.runtime, options_.lane.device_ordinal);
    synced = device.status().ok() ? lane->Synchronize() : device.status();
  }
  if (!synced.ok()) {
    EngineLogger()->warn("cuda lane pool: dropping a lane that failed to synchronise: {}", synced.ToString());
    return;  // destroyed here
  }
  absl::MutexLock lock(&mu_);
  if (idle_.size() < options_.max_idle) idle_.push_back(std::move(lane));
}

absl::Status LanePool::Prewarm() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<DeviceLane>> lane = Acquire();
  if (!lane.ok()) return lane.status();
  Release(*std::move(lane));
  return absl::OkStatus();
}

size_t LanePool::idle() const {
  absl::MutexLock lock(&mu_);
  return idle_.size();
}

int64_t LanePool::created() const {
  absl::MutexLock lock(&mu_);
  return created_;
}

CudaStream::CudaStream(std::shared_ptr<LanePool> pool) : pool_(std::move(pool)), worker_(MakeThreadStream()) {}

CudaStream::~CudaStream() {
  // The last item gives the lane back from the worker thread, after
  // everything queued before it; destroying the worker then joins it.
  worker_->Submit([this] { pool_->Release(std::move(lane_)); });
  worker_.reset();
}

void CudaStream::Submit(std::function<void()> work) {
  worker_->Submit([this, work = std::move(work)] { RunOnLane(work); });
}

void CudaStream::RunOnLane(const std::function<void()>& work) {
  if (!lane_tried_) {
    lane_tried_ = true;
    absl::StatusOr<std::unique_ptr<DeviceLane>> lane = pool_->Acquire();
    if (lane.ok()) {
      // The worker thread keeps the lane's device current for its whole life.
      lane_error_ = pool_->options().runtime->SetDevice(pool_->options().lane.device_ordinal);
      if (lane_error_.ok()) {
        lane_ = *std::move(lane);
      } else {
        pool_->Release(*std::move(lane));
      }
    } else {
      lane_error_ = lane.status();
    }
  }
  ScopedLane install(lane_.get(), lane_error_);
  work();
}

}  // namespace onyx
