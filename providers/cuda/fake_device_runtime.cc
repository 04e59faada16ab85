#include "providers/cuda/fake_device_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

constexpr size_t kAlignment = 256;

const char* KindName(int kind) {
  static const char* const kNames[] = {"HtoD", "DtoH", "DtoD", "Memset", "Record", "Wait"};
  return kNames[kind];
}

bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  return pa < pb + std::max<size_t>(b_bytes, 1) && pb < pa + std::max<size_t>(a_bytes, 1);
}

// CUDA's message for calls barred while the calling thread captures.
constexpr char kCaptureUnsupported[] = "operation not permitted when stream is capturing";

}  // namespace

FakeDeviceRuntime::FakeDeviceRuntime(Options options) : options_(std::move(options)) {}

FakeDeviceRuntime::~FakeDeviceRuntime() {
  absl::MutexLock lock(&mu_);
  for (auto& [p, a] : device_) std::free(const_cast<char*>(p));
  for (auto& [p, a] : pinned_) std::free(const_cast<char*>(p));
}

absl::Status FakeDeviceRuntime::Enter(const char* method) {
  ++calls_[method];
  auto it = failures_.find(method);
  if (it == failures_.end()) return absl::OkStatus();
  absl::Status status = it->second;
  failures_.erase(it);
  return status;
}

absl::Status FakeDeviceRuntime::CaptureGuard(const char* call) {
  for (auto& [key, s] : streams_) {
    if (s->capturing && s->capture_thread == std::this_thread::get_id()) {
      std::string error = absl::StrCat(call, ": ", kCaptureUnsupported);
      if (s->capture_error.empty()) s->capture_error = error;
      return absl::InternalError(error);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FakeDeviceRuntime::Stream*> FakeDeviceRuntime::FindStream(StreamHandle handle, const char* call) {
  auto it = streams_.find(reinterpret_cast<Stream*>(handle));
  if (it == streams_.end()) return absl::InvalidArgumentError(absl::StrCat(call, ": invalid resource handle"));
  return it->second.get();
}

absl::StatusOr<FakeDeviceRuntime::Event*> FakeDeviceRuntime::FindEvent(EventHandle handle, const char* call) {
  auto it = events_.find(reinterpret_cast<Event*>(handle));
  if (it == events_.end()) return absl::InvalidArgumentError(absl::StrCat(call, ": invalid resource handle"));
  return it->second.get();
}

absl::StatusOr<int> FakeDeviceRuntime::DeviceCount() {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("DeviceCount"); !s.ok()) return s;
  if (!options_.device_count_error.empty()) {
    return absl::UnavailableError(absl::StrCat("cudaGetDeviceCount: ", options_.device_count_error));
  }
  return options_.device_count;
}

absl::StatusOr<DeviceProperties> FakeDeviceRuntime::GetDeviceProperties(int device) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("GetDeviceProperties"); !s.ok()) return s;
  if (device < 0 || device >= options_.device_count) {
    return absl::InvalidArgumentError("cudaGetDeviceProperties: invalid device ordinal");
  }
  return DeviceProperties{"Fake GPU", 9, 0, options_.device_capacity_bytes, 132};
}

absl::StatusOr<int> FakeDeviceRuntime::GetDevice() {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("GetDevice"); !s.ok()) return s;
  auto it = current_device_.find(std::this_thread::get_id());
  return it == current_device_.end() ? 0 : it->second;
}

absl::Status FakeDeviceRuntime::SetDevice(int device) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("SetDevice"); !s.ok()) return s;
  if (device < 0 || device >= options_.device_count) {
    return absl::InvalidArgumentError("cudaSetDevice: invalid device ordinal");
  }
  current_device_[std::this_thread::get_id()] = device;
  return absl::OkStatus();
}

absl::StatusOr<void*> FakeDeviceRuntime::Allocate(AllocationMap& map, size_t bytes, size_t capacity, int64_t& live,
                                                  int64_t& count, const char* call) {
  if (absl::Status s = CaptureGuard(call); !s.ok()) return s;
  if (static_cast<size_t>(live) + bytes > capacity) {
    return absl::ResourceExhaustedError(absl::StrCat(call, ": out of memory (", bytes, " bytes)"));
  }
  const size_t rounded = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  char* p = static_cast<char*>(std::aligned_alloc(kAlignment, rounded));
  if (p == nullptr) return absl::ResourceExhaustedError(absl::StrCat(call, ": out of memory (", bytes, " bytes)"));
  std::memset(p, 0xA5, rounded);  // like cudaMalloc, never zeroed: code must not rely on it
  const uint64_t id = next_alloc_id_++;
  map[p] = Allocation{bytes, id};
  live_ids_.insert(id);
  live += static_cast<int64_t>(bytes);
  ++count;
  return static_cast<void*>(p);
}

absl::Status FakeDeviceRuntime::Release(AllocationMap& map, void* p, int64_t& live, int64_t& count, const char* call) {
  if (p == nullptr) return absl::OkStatus();
  if (absl::Status s = CaptureGuard(call); !s.ok()) return s;
  auto it = map.find(static_cast<const char*>(p));
  if (it == map.end()) return absl::InvalidArgumentError(absl::StrCat(call, ": invalid argument"));
  const uint64_t id = it->second.id;
  for (const auto& [key, s] : streams_) {
    for (const Op& op : s->queue) {
      if (op.dst_alloc == id || op.src_alloc == id) {
        violations_.push_back(absl::StrCat(call, ": freed ", it->second.bytes, " bytes that a queued ",
                                           KindName(static_cast<int>(op.kind)), " on stream ", s->id, " still uses"));
      }
    }
  }
  live -= static_cast<int64_t>(it->second.bytes);
  ++count;
  live_ids_.erase(id);
  std::free(p);
  map.erase(it);
  return absl::OkStatus();
}

uint64_t FakeDeviceRuntime::AllocationOf(const AllocationMap& map, const void* p, size_t bytes) const {
  const char* c = static_cast<const char*>(p);
  auto it = map.upper_bound(c);
  if (it == map.begin()) return 0;
  --it;
  if (c + bytes > it->first + std::max<size_t>(it->second.bytes, 1)) return 0;
  return it->second.id;
}

bool FakeDeviceRuntime::AllocationLive(uint64_t id) const { return id == 0 || live_ids_.count(id) > 0; }

absl::StatusOr<void*> FakeDeviceRuntime::DeviceMalloc(size_t bytes) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("DeviceMalloc"); !s.ok()) return s;
  return Allocate(device_, bytes, options_.device_capacity_bytes, device_live_, device_allocations_, "cudaMalloc");
}

absl::Status FakeDeviceRuntime::DeviceFree(void* p) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("DeviceFree"); !s.ok()) return s;
  return Release(device_, p, device_live_, device_frees_, "cudaFree");
}

absl::StatusOr<void*> FakeDeviceRuntime::PinnedHostMalloc(size_t bytes) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("PinnedHostMalloc"); !s.ok()) return s;
  return Allocate(pinned_, bytes, options_.pinned_capacity_bytes, pinned_live_, pinned_allocations_, "cudaHostAlloc");
}

absl::Status FakeDeviceRuntime::PinnedHostFree(void* p) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("PinnedHostFree"); !s.ok()) return s;
  return Release(pinned_, p, pinned_live_, pinned_frees_, "cudaFreeHost");
}

absl::StatusOr<StreamHandle> FakeDeviceRuntime::StreamCreate() {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("StreamCreate"); !s.ok()) return s;
  auto stream = std::make_unique<Stream>();
  stream->id = next_stream_id_++;
  Stream* key = stream.get();
  streams_[key] = std::move(stream);
  return reinterpret_cast<StreamHandle>(key);
}

absl::Status FakeDeviceRuntime::StreamDestroy(StreamHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("StreamDestroy"); !s.ok()) return s;
  absl::StatusOr<Stream*> stream = FindStream(handle, "cudaStreamDestroy");
  if (!stream.ok()) return stream.status();
  // CUDA lets queued work finish after the handle is gone.
  RunStream(**stream);
  for (auto& [key, e] : events_) {
    if (e->stream == *stream) e->stream = nullptr;
  }
  for (auto& e : retired_events_) {
    if (e->stream == *stream) e->stream = nullptr;
  }
  streams_.erase(*stream);
  return absl::OkStatus();
}

absl::Status FakeDeviceRuntime::StreamSynchronize(StreamHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("StreamSynchronize"); !s.ok()) return s;
  absl::StatusOr<Stream*> stream = FindStream(handle, "cudaStreamSynchronize");
  if (!stream.ok()) return stream.status();
  if ((*stream)->capturing) {
    std::string error = absl::StrCat("cudaStreamSynchronize: ", kCaptureUnsupported);
    if ((*stream)->capture_error.empty()) (*stream)->capture_error = error;
    return absl::InternalError(error);
  }
  RunStream(**stream);
  return absl::OkStatus();
}

absl::StatusOr<EventHandle> FakeDeviceRuntime::EventCreate() {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("EventCreate"); !s.ok()) return s;
  auto event = std::make_unique<Event>();
  Event* key = event.get();
  events_[key] = std::move(event);
  return reinterpret_cast<EventHandle>(key);
}

absl::Status FakeDeviceRuntime::EventRecord(EventHandle event_handle, StreamHandle stream_handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("EventRecord"); !s.ok()) return s;
  absl::StatusOr<Event*> event = FindEvent(event_handle, "cudaEventRecord");
  if (!event.ok()) return event.status();
  absl::StatusOr<Stream*> stream = FindStream(stream_handle, "cudaEventRecord");
  if (!stream.ok()) return stream.status();
  Event& e = **event;
  e.generation++;
  e.stream = *stream;
  e.in_capture = (*stream)->capturing;
  Op op;
  op.kind = OpKind::kRecord;
  op.event = &e;
  op.generation = e.generation;
  return Submit(stream_handle, std::move(op), "cudaEventRecord");
}

absl::Status FakeDeviceRuntime::StreamWaitEvent(StreamHandle stream_handle, EventHandle event_handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("StreamWaitEvent"); !s.ok()) return s;
  absl::StatusOr<Event*> event = FindEvent(event_handle, "cudaStreamWaitEvent");
  if (!event.ok()) return event.status();
  if ((*event)->completed >= (*event)->generation) return FindStream(stream_handle, "cudaStreamWaitEvent").status();
  Op op;
  op.kind = OpKind::kWait;
  op.event = *event;
  op.generation = (*event)->generation;
  return Submit(stream_handle, std::move(op), "cudaStreamWaitEvent");
}

absl::StatusOr<bool> FakeDeviceRuntime::EventQuery(EventHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("EventQuery"); !s.ok()) return s;
  absl::StatusOr<Event*> event = FindEvent(handle, "cudaEventQuery");
  if (!event.ok()) return event.status();
  if ((*event)->in_capture) return absl::InternalError(absl::StrCat("cudaEventQuery: ", kCaptureUnsupported));
  return (*event)->completed >= (*event)->generation;
}

absl::Status FakeDeviceRuntime::EventSynchronize(EventHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("EventSynchronize"); !s.ok()) return s;
  absl::StatusOr<Event*> event = FindEvent(handle, "cudaEventSynchronize");
  if (!event.ok()) return event.status();
  if ((*event)->in_capture) return absl::InternalError(absl::StrCat("cudaEventSynchronize: ", kCaptureUnsupported));
  RunUntil(**event, (*event)->generation);
  return absl::OkStatus();
}

absl::Status FakeDeviceRuntime::EventDestroy(EventHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("EventDestroy"); !s.ok()) return s;
  absl::StatusOr<Event*> event = FindEvent(handle, "cudaEventDestroy");
  if (!event.ok()) return event.status();
  // Queued work and captured graphs may still point at it, as the driver
  // lets them: keep the object, forget the handle.
  auto it = events_.find(*event);
  retired_events_.push_back(std::move(it->second));
  events_.erase(it);
  return absl::OkStatus();
}

FakeDeviceRuntime::Op FakeDeviceRuntime::CopyOp(OpKind kind, void* dst, const void* src, size_t bytes) {
  Op op;
  op.kind = kind;
  op.dst = dst;
  op.src = src;
  op.bytes = bytes;
  return op;
}

absl::Status FakeDeviceRuntime::Submit(StreamHandle handle, Op op, const char* call) {
  absl::StatusOr<Stream*> stream = FindStream(handle, call);
  if (!stream.ok()) return stream.status();
  if ((*stream)->capturing) {
    (*stream)->captured.push_back(std::move(op));
  } else {
    (*stream)->queue.push_back(std::move(op));
  }
  return absl::OkStatus();
}

absl::Status FakeDeviceRuntime::MemcpyHostToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("MemcpyHostToDeviceAsync"); !s.ok()) return s;
  constexpr char kCall[] = "cudaMemcpyAsync(HostToDevice)";
  Op op = CopyOp(OpKind::kHtoD, dst, src, bytes);
  op.dst_alloc = AllocationOf(device_, dst, bytes);
  if (op.dst_alloc == 0 || AllocationOf(device_, src, bytes) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kCall, ": invalid argument"));
  }
  op.src_alloc = AllocationOf(pinned_, src, bytes);
  if (op.src_alloc == 0) {  // pageable: the driver copies it before returning
    const char* c = static_cast<const char*>(src);
    op.snapshot = std::make_shared<std::vector<char>>(c, c + bytes);
  }
  return Submit(stream, std::move(op), kCall);
}

absl::Status FakeDeviceRuntime::MemcpyDeviceToHostAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("MemcpyDeviceToHostAsync"); !s.ok()) return s;
  constexpr char kCall[] = "cudaMemcpyAsync(DeviceToHost)";
  Op op = CopyOp(OpKind::kDtoH, dst, src, bytes);
  op.src_alloc = AllocationOf(device_, src, bytes);
  if (op.src_alloc == 0 || AllocationOf(device_, dst, bytes) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kCall, ": invalid argument"));
  }
  op.dst_alloc = AllocationOf(pinned_, dst, bytes);
  const bool pageable = op.dst_alloc == 0;
  if (absl::Status s = Submit(stream, std::move(op), kCall); !s.ok()) return s;
  // Into pageable memory the copy has completed when the call returns.
  Stream* st = *FindStream(stream, kCall);
  if (pageable && !st->capturing) RunStream(*st);
  return absl::OkStatus();
}

absl::Status FakeDeviceRuntime::MemcpyDeviceToDeviceAsync(void* dst, const void* src, size_t bytes,
                                                          StreamHandle stream) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("MemcpyDeviceToDeviceAsync"); !s.ok()) return s;
  constexpr char kCall[] = "cudaMemcpyAsync(DeviceToDevice)";
  Op op = CopyOp(OpKind::kDtoD, dst, src, bytes);
  op.dst_alloc = AllocationOf(device_, dst, bytes);
  op.src_alloc = AllocationOf(device_, src, bytes);
  if (op.dst_alloc == 0 || op.src_alloc == 0) {
    return absl::InvalidArgumentError(absl::StrCat(kCall, ": invalid argument"));
  }
  return Submit(stream, std::move(op), kCall);
}

absl::Status FakeDeviceRuntime::MemsetAsync(void* dst, int value, size_t bytes, StreamHandle stream) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("MemsetAsync"); !s.ok()) return s;
  Op op = CopyOp(OpKind::kMemset, dst, nullptr, bytes);
  op.value = value;
  op.dst_alloc = AllocationOf(device_, dst, bytes);
  if (op.dst_alloc == 0) return absl::InvalidArgumentError("cudaMemsetAsync: invalid argument");
  return Submit(stream, std::move(op), "cudaMemsetAsync");
}

void FakeDeviceRuntime::RunOne(Stream& stream) {
  Op op = std::move(stream.queue.front());
  stream.queue.pop_front();
  const char* kind = KindName(static_cast<int>(op.kind));
  if (!AllocationLive(op.dst_alloc) || !AllocationLive(op.src_alloc)) {
    violations_.push_back(absl::StrCat(kind, " of ", op.bytes, " bytes on stream ", stream.id,
                                       " ran on memory freed after it was queued"));
    return;
  }
  switch (op.kind) {
    case OpKind::kHtoD: std::memcpy(op.dst, op.snapshot ? op.snapshot->data() : op.src, op.bytes); break;
    case OpKind::kDtoH:
    case OpKind::kDtoD: std::memcpy(op.dst, op.src, op.bytes); break;
    case OpKind::kMemset: std::memset(op.dst, op.value, op.bytes); break;
    case OpKind::kRecord: op.event->completed = std::max(op.event->completed, op.generation); break;
    case OpKind::kWait: RunUntil(*op.event, op.generation); break;
  }
  executed_.push_back(ExecutedOp{stream.id, kind, op.dst, op.src, op.bytes});
}

void FakeDeviceRuntime::RunStream(Stream& stream) {
  while (!stream.queue.empty()) RunOne(stream);
}

void FakeDeviceRuntime::RunUntil(Event& event, uint64_t generation) {
  while (event.completed < generation) {
    if (event.stream == nullptr || event.stream->queue.empty()) {
      // The record is not queued anywhere (it went into a graph): nothing to wait for.
      event.completed = generation;
      return;
    }
    RunOne(*event.stream);
  }
}

absl::Status FakeDeviceRuntime::BeginCapture(StreamHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("BeginCapture"); !s.ok()) return s;
  absl::StatusOr<Stream*> stream = FindStream(handle, "cudaStreamBeginCapture");
  if (!stream.ok()) return stream.status();
  if ((*stream)->capturing) return absl::InternalError(absl::StrCat("cudaStreamBeginCapture: ", kCaptureUnsupported));
  (*stream)->capturing = true;
  (*stream)->capture_thread = std::this_thread::get_id();
  (*stream)->capture_error.clear();
  (*stream)->captured.clear();
  return absl::OkStatus();
}

absl::StatusOr<GraphHandle> FakeDeviceRuntime::EndCapture(StreamHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("EndCapture"); !s.ok()) return s;
  absl::StatusOr<Stream*> found = FindStream(handle, "cudaStreamEndCapture");
  if (!found.ok()) return found.status();
  Stream& stream = **found;
  if (!stream.capturing) return absl::InternalError("cudaStreamEndCapture: stream is not capturing");
  if (stream.capture_thread != std::this_thread::get_id()) {
    return absl::InternalError(
        "cudaStreamEndCapture: attempt to terminate a thread-local capture sequence from another thread");
  }
  stream.capturing = false;
  for (auto& [key, e] : events_) {
    if (e->in_capture && e->stream == &stream) {
      e->in_capture = false;
      e->completed = e->generation;
    }
  }
  auto graph = std::make_unique<Graph>();
  graph->ops = std::move(stream.captured);
  stream.captured.clear();
  if (!stream.capture_error.empty()) {
    return absl::InternalError(absl::StrCat(
        "cudaStreamEndCapture: operation failed due to a previous error during capture (", stream.capture_error, ")"));
  }
  Graph* key = graph.get();
  graphs_[key] = std::move(graph);
  return reinterpret_cast<GraphHandle>(key);
}

absl::StatusOr<GraphExecHandle> FakeDeviceRuntime::GraphInstantiate(GraphHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("GraphInstantiate"); !s.ok()) return s;
  auto it = graphs_.find(reinterpret_cast<Graph*>(handle));
  if (it == graphs_.end()) return absl::InvalidArgumentError("cudaGraphInstantiate: invalid resource handle");
  auto exec = std::make_unique<Graph>(*it->second);
  Graph* key = exec.get();
  execs_[key] = std::move(exec);
  return reinterpret_cast<GraphExecHandle>(key);
}

absl::Status FakeDeviceRuntime::GraphLaunch(GraphExecHandle handle, StreamHandle stream) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("GraphLaunch"); !s.ok()) return s;
  auto it = execs_.find(reinterpret_cast<Graph*>(handle));
  if (it == execs_.end()) return absl::InvalidArgumentError("cudaGraphLaunch: invalid resource handle");
  for (const Op& op : it->second->ops) {
    if (absl::Status s = Submit(stream, op, "cudaGraphLaunch"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status FakeDeviceRuntime::GraphDestroy(GraphHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("GraphDestroy"); !s.ok()) return s;
  if (graphs_.erase(reinterpret_cast<Graph*>(handle)) == 0) {
    return absl::InvalidArgumentError("cudaGraphDestroy: invalid resource handle");
  }
  return absl::OkStatus();
}

absl::Status FakeDeviceRuntime::GraphExecDestroy(GraphExecHandle handle) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Enter("GraphExecDestroy"); !s.ok()) return s;
  if (execs_.erase(reinterpret_cast<Graph*>(handle)) == 0) {
    return absl::InvalidArgumentError("cudaGraphExecDestroy: invalid resource handle");
  }
  return absl::OkStatus();
}

void FakeDeviceRuntime::RunAll() {
  absl::MutexLock lock(&mu_);
  for (bool ran = true; ran;) {
    ran = false;
    for (auto& [key, s] : streams_) {
      if (!s->queue.empty()) {
        RunStream(*s);
        ran = true;
      }
    }
  }
}

void FakeDeviceRuntime::FailNextCall(const std::string& method, absl::Status status) {
  absl::MutexLock lock(&mu_);
  failures_[method] = std::move(status);
}

int64_t FakeDeviceRuntime::calls(const std::string& method) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

size_t FakeDeviceRuntime::queued_ops(StreamHandle stream) const {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(reinterpret_cast<Stream*>(stream));
  return it == streams_.end() ? 0 : it->second->queue.size();
}

int FakeDeviceRuntime::stream_id(StreamHandle stream) const {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(reinterpret_cast<Stream*>(stream));
  return it == streams_.end() ? 0 : it->second->id;
}

bool FakeDeviceRuntime::QueuedWorkTouches(const void* p, size_t bytes) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [key, s] : streams_) {
    for (const Op& op : s->queue) {
      if (op.kind == OpKind::kRecord || op.kind == OpKind::kWait) continue;
      if (Overlaps(op.dst, op.bytes, p, bytes)) return true;
      if (op.src != nullptr && !op.snapshot && Overlaps(op.src, op.bytes, p, bytes)) return true;
    }
  }
  return false;
}

std::vector<FakeDeviceRuntime::ExecutedOp> FakeDeviceRuntime::executed() const {
  absl::MutexLock lock(&mu_);
  return executed_;
}

std::vector<std::string> FakeDeviceRuntime::violations() const {
  absl::MutexLock lock(&mu_);
  return violations_;
}

size_t FakeDeviceRuntime::graph_ops(GraphHandle graph) const {
  absl::MutexLock lock(&mu_);
  auto it = graphs_.find(reinterpret_cast<Graph*>(graph));
  return it == graphs_.end() ? 0 : it->second->ops.size();
}

int64_t FakeDeviceRuntime::device_allocations() const {
  absl::MutexLock lock(&mu_);
  return device_allocations_;
}
int64_t FakeDeviceRuntime::device_frees() const {
  absl::MutexLock lock(&mu_);
  return device_frees_;
}
int64_t FakeDeviceRuntime::device_bytes_live() const {
  absl::MutexLock lock(&mu_);
  return device_live_;
}
int64_t FakeDeviceRuntime::pinned_allocations() const {
  absl::MutexLock lock(&mu_);
  return pinned_allocations_;
}
int64_t FakeDeviceRuntime::pinned_frees() const {
  absl::MutexLock lock(&mu_);
  return pinned_frees_;
}
int64_t FakeDeviceRuntime::pinned_bytes_live() const {
  absl::MutexLock lock(&mu_);
  return pinned_live_;
}

}  // namespace onyx
