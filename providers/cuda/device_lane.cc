#include "providers/cuda/device_lane.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace onyx {
namespace {

thread_local DeviceLane* t_lane = nullptr;
thread_local const absl::Status* t_lane_error = nullptr;

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceLane>> DeviceLane::Create(Config config) {
  ScopedDevice device(*config.runtime, config.options.device_ordinal);
  if (!device.status().ok()) return device.status();
  std::unique_ptr<DeviceLane> lane(new DeviceLane(std::move(config)));
  DeviceRuntime& rt = *lane->config_.runtime;
  // A failure below leaves a partly made lane; its destructor undoes that part.
  absl::StatusOr<StreamHandle> stream = rt.StreamCreate();
  if (!stream.ok()) return stream.status();
  lane->stream_ = *stream;
  const LaneOptions& options = lane->config_.options;
  if (options.workspace_bytes > 0) {
    absl::StatusOr<void*> workspace = rt.DeviceMalloc(options.workspace_bytes);
    if (!workspace.ok()) return workspace.status();
    lane->workspace_ = *workspace;
  }
  if (lane->config_.resources) {
    LaneResourceRequest request{options.device_ordinal, lane->stream_, lane->workspace_, options.workspace_bytes,
                                options.allow_tf32};
    absl::StatusOr<std::unique_ptr<LaneResources>> resources = lane->config_.resources(request);
    if (!resources.ok()) return resources.status();
    lane->resources_ = *std::move(resources);
  }
  return lane;
}

DeviceLane::~DeviceLane() {
  DeviceRuntime& rt = *config_.runtime;
  ScopedDevice device(rt, config_.options.device_ordinal);
  absl::Status synced = stream_ != nullptr ? Synchronize() : absl::OkStatus();
  if (!synced.ok()) {
    // Buffers the device may still read stay allocated: a leak, not a race.
    EngineLogger()->warn("cuda lane: synchronising its stream failed ({}); leaking {} staging buffers",
                         synced.ToString(), pending_.size());
  }
  resources_.reset();  // handles bound to the stream go before it
  for (EventHandle e : all_events_) rt.EventDestroy(e).IgnoreError();
  if (workspace_ != nullptr) rt.DeviceFree(workspace_).IgnoreError();
  if (stream_ != nullptr) rt.StreamDestroy(stream_).IgnoreError();
}

absl::StatusOr<void*> DeviceLane::AcquireStaging(size_t bytes) {
  if (absl::Status reaped = ReapStaging(); !reaped.ok()) return reaped;
  while (true) {
    absl::StatusOr<void*> buffer = config_.staging->Allocate(bytes);
    if (buffer.ok() || !absl::IsResourceExhausted(buffer.status()) || pending_.empty()) return buffer;
    if (absl::Status waited = WaitOldestStaging(); !waited.ok()) return waited;
  }
}

absl::Status DeviceLane::ReleaseStagingAfterWork(void* p) {
  absl::StatusOr<EventHandle> event = AcquireEvent();
  absl::Status recorded = event.ok() ? config_.runtime->EventRecord(*event, stream_) : event.status();
  if (recorded.ok()) {
    pending_.push_back(Pending{p, *event});
    return absl::OkStatus();
  }
  if (event.ok()) ReturnEvent(*event);
  absl::Status synced = config_.runtime->StreamSynchronize(stream_);
  if (!synced.ok()) return synced;  // p leaks: the copy reading it may still be queued
  ReleaseStagingNow(p);
  return recorded;
}

void DeviceLane::ReleaseStagingNow(void* p) { config_.staging->Free(p); }

absl::Status DeviceLane::ReapStaging() {
  // Events complete in stream order, so the first incomplete one ends the scan.
  while (!pending_.empty()) {
    absl::StatusOr<bool> done = config_.runtime->EventQuery(pending_.front().event);
    if (!done.ok()) return done.status();
    if (!*done) break;
    ReleaseStagingNow(pending_.front().buffer);
    ReturnEvent(pending_.front().event);
    pending_.pop_front();
  }
  return absl::OkStatus();
}

absl::Status DeviceLane::WaitOldestStaging() {
  if (pending_.empty()) return absl::OkStatus();
  if (absl::Status s = config_.runtime->EventSynchronize(pending_.front().event); !s.ok()) return s;
  ReleaseStagingNow(pending_.front().buffer);
  ReturnEvent(pending_.front().event);
  pending_.pop_front();
  return absl::OkStatus();
}

absl::Status DeviceLane::Synchronize() {
  if (absl::Status s = config_.runtime->StreamSynchronize(stream_); !s.ok()) return s;
  for (const Pending& p : pending_) {
    ReleaseStagingNow(p.buffer);
    ReturnEvent(p.event);
  }
  pending_.clear();
  return absl::OkStatus();
}

absl::StatusOr<EventHandle> DeviceLane::AcquireEvent() {
  if (!free_events_.empty()) {
    EventHandle e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  absl::StatusOr<EventHandle> e = config_.runtime->EventCreate();
  if (e.ok()) all_events_.push_back(*e);
  return e;
}

void DeviceLane::ReturnEvent(EventHandle event) { free_events_.push_back(event); }

DeviceLane* CurrentDeviceLane() { return t_lane; }

absl::StatusOr<DeviceLane*> RequireCurrentLane() {
  if (t_lane != nullptr) return t_lane;
  if (t_lane_error != nullptr && !t_lane_error->ok()) {
    return absl::Status(t_lane_error->code(),
                        absl::StrCat("the CUDA lane of this session could not be set up: ", t_lane_error->message()));
  }
  return absl::FailedPreconditionError(
      "no CUDA lane on this thread: cuda kernels must run on the stream the cuda provider created "
      "(IExecutionProvider::CreateStream)");
}

ScopedLane::ScopedLane(DeviceLane* lane, absl::Status error)
    : previous_lane_(t_lane), previous_error_(t_lane_error), error_(std::move(error)) {
  t_lane = lane;
  t_lane_error = &error_;
}

ScopedLane::~ScopedLane() {
  t_lane = previous_lane_;
  t_lane_error = previous_error_;
}

}  // namespace onyx
