// FakeDeviceRuntime: a DeviceRuntime for tests, on machines without a GPU.
// "Device" memory is host memory it tracks; streams are queues a test can
// watch; capture records work into graphs that launch replays.
//
//   auto fake = std::make_shared<FakeDeviceRuntime>();
//   StreamHandle s = *fake->StreamCreate();
//   void* dev = *fake->DeviceMalloc(64);
//   fake->MemcpyHostToDeviceAsync(dev, pinned, 64, s);  // queued, not yet run
//   EXPECT_EQ(fake->queued_ops(s), 1);
//   fake->StreamSynchronize(s);                         // runs it: dev holds the bytes
//
// Work is lazy: what is submitted to a stream runs, in order, only when
// StreamSynchronize is called on it, when EventSynchronize waits for an event
// recorded on it (up to that record), when work queued on another stream
// waits for such an event, or when the test calls RunAll(). EventQuery never
// runs work, so a copy stays observably pending until something waits for it.
// As with CUDA, a copy from pageable (untracked) host memory reads its source
// when it is submitted, and a copy into pageable memory completes before the
// call returns; pinned memory is read and written when the copy runs.
//
// Misuse is detected rather than tolerated:
//  - a copy or fill whose device side is not inside a live device allocation
//    fails with INVALID_ARGUMENT ("cudaMemcpyAsync(...): invalid argument");
//  - freeing device or pinned memory that queued work still uses, and work
//    running on memory freed since it was queued, are recorded in
//    violations() (frees do not wait for the device as cudaFree does, so code
//    relying on that implicit wait is caught as well);
//  - allocating or freeing on the thread that is capturing, or synchronising
//    or querying the capturing stream, fails and invalidates the capture, as
//    thread-local capture mode does.
// Every call is counted by name (calls("DeviceMalloc")); FailNextCall injects
// one failure. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "providers/cuda/device_runtime.h"

namespace onyx {

class FakeDeviceRuntime final : public DeviceRuntime {
 public:
  struct Options {
    int device_count = 1;
    // When set, DeviceCount fails (UNAVAILABLE) with "cudaGetDeviceCount: "
    // and this text, as on a host without a driver.
    std::string device_count_error;
    // Allocations that would take the live bytes past these fail with
    // RESOURCE_EXHAUSTED ("cudaMalloc: out of memory").
    size_t device_capacity_bytes = size_t{1} << 30;
    size_t pinned_capacity_bytes = size_t{1} << 30;
  };

  // One op that ran, in the order ops ran. `kind` is "HtoD", "DtoH", "DtoD",
  // "Memset", "Record" or "Wait".
  struct ExecutedOp {
    int stream = 0;  // stream_id() of the stream it ran on
    std::string kind;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
  };

  FakeDeviceRuntime() : FakeDeviceRuntime(Options()) {}
  explicit FakeDeviceRuntime(Options options);
  ~FakeDeviceRuntime() override;

  absl::StatusOr<int> DeviceCount() override;
  absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) override;
  absl::StatusOr<int> GetDevice() override;
  absl::Status SetDevice(int device) override;
  absl::StatusOr<void*> DeviceMalloc(size_t bytes) override;
  absl::Status DeviceFree(void* p) override;
  absl::StatusOr<void*> PinnedHostMalloc(size_t bytes) override;
  absl::Status PinnedHostFree(void* p) override;
  absl::StatusOr<StreamHandle> StreamCreate() override;
  absl::Status StreamDestroy(StreamHandle stream) override;
  absl::Status StreamSynchronize(StreamHandle stream) override;
  absl::StatusOr<EventHandle> EventCreate() override;
  absl::Status EventRecord(EventHandle event, StreamHandle stream) override;
  absl::Status StreamWaitEvent(StreamHandle stream, EventHandle event) override;
  absl::StatusOr<bool> EventQuery(EventHandle event) override;
  absl::Status EventSynchronize(EventHandle event) override;
  absl::Status EventDestroy(EventHandle event) override;
  absl::Status MemcpyHostToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) override;
  absl::Status MemcpyDeviceToHostAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) override;
  absl::Status MemcpyDeviceToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) override;
  absl::Status MemsetAsync(void* dst, int value, size_t bytes, StreamHandle stream) override;
  absl::Status BeginCapture(StreamHandle stream) override;
  absl::StatusOr<GraphHandle> EndCapture(StreamHandle stream) override;
  absl::StatusOr<GraphExecHandle> GraphInstantiate(GraphHandle graph) override;
  absl::Status GraphLaunch(GraphExecHandle exec, StreamHandle stream) override;
  absl::Status GraphDestroy(GraphHandle graph) override;
  absl::Status GraphExecDestroy(GraphExecHandle exec) override;

  // Test controls and observations.
  // Runs all queued work on every stream.
  void RunAll();
  // The next call to `method` (e.g. "StreamCreate") fails with `status`.
  void FailNextCall(const std::string& method, absl::Status status);
  int64_t calls(const std::string& method) const;
  // Ops waiting on `stream` (not counting work recorded by a capture).
  size_t queued_ops(StreamHandle stream) const;
  // Stable small id of a stream (1, 2, ... in creation order); 0 if unknown.
  int stream_id(StreamHandle stream) const;
  // Whether queued work on any stream reads or writes [p, p + bytes).
  bool QueuedWorkTouches(const void* p, size_t bytes) const;
  std::vector<ExecutedOp> executed() const;
  std::vector<std::string> violations() const;
  // Ops recorded in a captured graph.
  size_t graph_ops(GraphHandle graph) const;

  int64_t device_allocations() const;
  int64_t device_frees() const;
  int64_t device_bytes_live() const;
  int64_t pinned_allocations() const;
  int64_t pinned_frees() const;
  int64_t pinned_bytes_live() const;

 private:
  enum class OpKind { kHtoD, kDtoH, kDtoD, kMemset, kRecord, kWait };
  struct Event;
  struct Op {
    OpKind kind = OpKind::kHtoD;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
    int value = 0;
    uint64_t dst_alloc = 0;  // allocation ids (0: untracked host memory)
    uint64_t src_alloc = 0;
    std::shared_ptr<std::vector<char>> snapshot;  // pageable source, read at submission
    Event* event = nullptr;
    uint64_t generation = 0;
  };
  struct Stream {
    int id = 0;
    std::deque<Op> queue;
    bool capturing = false;
    std::thread::id capture_thread;
    std::string capture_error;  // non-empty: the capture was invalidated
    std::vector<Op> captured;
  };
  struct Event {
    Stream* stream = nullptr;  // of the latest record
    uint64_t generation = 0;   // records so far
    uint64_t completed = 0;    // latest record that has run
    bool in_capture = false;   // latest record went into a capture
  };
  struct Graph {
    std::vector<Op> ops;
  };
  struct Allocation {
    size_t bytes = 0;
    uint64_t id = 0;
  };
  using AllocationMap = std::map<const char*, Allocation>;

  absl::Status Enter(const char* method) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CaptureGuard(const char* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Stream*> FindStream(StreamHandle handle, const char* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Event*> FindEvent(EventHandle handle, const char* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<void*> Allocate(AllocationMap& map, size_t bytes, size_t capacity, int64_t& live, int64_t& count,
                                 const char* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Release(AllocationMap& map, void* p, int64_t& live, int64_t& count, const char* call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Id of the live allocation holding [p, p + bytes), or 0.
  uint64_t AllocationOf(const AllocationMap& map, const void* p, size_t bytes) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AllocationLive(uint64_t id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static Op CopyOp(OpKind kind, void* dst, const void* src, size_t bytes);
  absl::Status Submit(StreamHandle stream, Op op, const char* call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunOne(Stream& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunStream(Stream& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunUntil(Event& event, uint64_t generation) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, int64_t> calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::thread::id, int> current_device_ ABSL_GUARDED_BY(mu_);
  AllocationMap device_ ABSL_GUARDED_BY(mu_);
  AllocationMap pinned_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> live_ids_ ABSL_GUARDED_BY(mu_);
  uint64_t next_alloc_id_ ABSL_GUARDED_BY(mu_) = 1;
  int64_t device_live_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t device_allocations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t device_frees_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pinned_live_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pinned_allocations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pinned_frees_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<Stream*, std::unique_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);
  int next_stream_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<Event*, std::unique_ptr<Event>> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Event>> retired_events_ ABSL_GUARDED_BY(mu_);  // destroyed handles
  std::map<Graph*, std::unique_ptr<Graph>> graphs_ ABSL_GUARDED_BY(mu_);
  std::map<Graph*, std::unique_ptr<Graph>> execs_ ABSL_GUARDED_BY(mu_);
  std::vector<ExecutedOp> executed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
