// CudaStream: the Stream the CUDA provider gives each session lane. Work runs
// in submission order on a worker thread of its own, with the lane's
// DeviceLane installed as that thread's current lane (device_lane.h), so
// kernels find their device stream, library handles and staging buffers
// through CurrentCudaLane() / RequireCurrentLane().
//
//   auto pool = std::make_shared<LanePool>(LanePool::Options{runtime, pinned_arena, lane_options, factory});
//   RETURN_IF_ERROR(pool->Prewarm());       // lane creation errors surface here
//   auto stream = std::make_unique<CudaStream>(pool);
//   stream->Submit([] { DeviceLane* lane = CurrentDeviceLane(); ... });
//
// Lanes come from a LanePool: a CudaStream takes one on its first work item
// (on its worker thread) and gives it back, synchronised, when destroyed. So
// making a stream is cheap (the session creates one just to ask whether the
// provider has streams), and a lane's device stream and handles outlive the
// sessions that used it. If no lane can be had, the work items still run,
// with that error installed in place of the lane: kernels fail with it
// through RequireCurrentLane().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "framework/stream.h"
#include "providers/cuda/device_lane.h"

namespace onyx {

// Idle lanes of one device, kept for reuse. Thread-safe.
class LanePool {
 public:
  struct Options {
    std::shared_ptr<DeviceRuntime> runtime;
    std::shared_ptr<IAllocator> staging;
    LaneOptions lane;
    LaneResourcesFactory resources;
    size_t max_idle = 4;  // lanes kept beyond this are destroyed on Release
  };
  explicit LanePool(Options options) : options_(std::move(options)) {}

  // An idle lane, or a new one (DeviceLane::Create's errors).
  absl::StatusOr<std::unique_ptr<DeviceLane>> Acquire();
  // Synchronises `lane` and keeps it for reuse; a lane that fails to
  // synchronise, or one past max_idle, is destroyed.
  void Release(std::unique_ptr<DeviceLane> lane);
  // Makes sure one idle lane exists: the first lane's errors (no memory for
  // the workspace, a library that fails to initialise) surface here.
  absl::Status Prewarm();

  size_t idle() const;
  int64_t created() const;
  const Options& options() const { return options_; }

 private:
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<DeviceLane>> idle_ ABSL_GUARDED_BY(mu_);
  int64_t created_ ABSL_GUARDED_BY(mu_) = 0;
};

// Thread-safe (Submit from any thread).
class CudaStream final : public Stream {
 public:
  explicit CudaStream(std::shared_ptr<LanePool> pool);
  // Runs the queued work, then returns the lane to the pool and joins.
  ~CudaStream() override;

  void Submit(std::function<void()> work) override;

 private:
  // Worker thread only.
  void RunOnLane(const std::function<void()>& work);

  const std::shared_ptr<LanePool> pool_;
  // Touched by the worker thread only, and by the destructor after it has
  // stopped.
  std::unique_ptr<DeviceLane> lane_;
  absl::Status lane_error_;
  bool lane_tried_ = false;
  std::unique_ptr<Stream> worker_;
};

}  // namespace onyx
