#include "providers/cuda/fake_device_runtime.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace onyx {
namespace {

TEST(FakeDeviceRuntimeTest, WorkRunsOnlyWhenSomethingWaitsForIt) {
  FakeDeviceRuntime fake;
  StreamHandle s = *fake.StreamCreate();
  char* dev = static_cast<char*>(*fake.DeviceMalloc(4));
  char* pinned = static_cast<char*>(*fake.PinnedHostMalloc(4));
  std::memcpy(pinned, "abcd", 4);
  ASSERT_TRUE(fake.MemcpyHostToDeviceAsync(dev, pinned, 4, s).ok());
  EventHandle e = *fake.EventCreate();
  ASSERT_TRUE(fake.EventRecord(e, s).ok());
  EXPECT_EQ(fake.queued_ops(s), 2u);
  EXPECT_FALSE(*fake.EventQuery(e));  // a query never runs work
  EXPECT_TRUE(fake.QueuedWorkTouches(pinned, 4));
  ASSERT_TRUE(fake.EventSynchronize(e).ok());
  EXPECT_TRUE(*fake.EventQuery(e));
  EXPECT_EQ(fake.queued_ops(s), 0u);
  EXPECT_EQ(std::memcmp(dev, "abcd", 4), 0);
  EXPECT_TRUE(fake.violations().empty());
}

TEST(FakeDeviceRuntimeTest, PageableSourceIsReadAtSubmissionPinnedAtRun) {
  FakeDeviceRuntime fake;
  StreamHandle s = *fake.StreamCreate();
  char* dev = static_cast<char*>(*fake.DeviceMalloc(8));
  char pageable[4] = {'p', 'p', 'p', 'p'};
  char* pinned = static_cast<char*>(*fake.PinnedHostMalloc(4));
  std::memcpy(pinned, "1111", 4);
  ASSERT_TRUE(fake.MemcpyHostToDeviceAsync(dev, pageable, 4, s).ok());
  ASSERT_TRUE(fake.MemcpyHostToDeviceAsync(dev + 4, pinned, 4, s).ok());
  std::memcpy(pageable, "qqqq", 4);
  std::memcpy(pinned, "2222", 4);
  ASSERT_TRUE(fake.StreamSynchronize(s).ok());
  EXPECT_EQ(std::memcmp(dev, "pppp2222", 8), 0);
}

TEST(FakeDeviceRuntimeTest, CopyIntoPageableMemoryCompletesBeforeReturning) {
  FakeDeviceRuntime fake;
  StreamHandle s = *fake.StreamCreate();
  char* dev = static_cast<char*>(*fake.DeviceMalloc(4));
  ASSERT_TRUE(fake.MemsetAsync(dev, 'z', 4, s).ok());
  char out[4] = {};
  ASSERT_TRUE(fake.MemcpyDeviceToHostAsync(out, dev, 4, s).ok());
  EXPECT_EQ(std::memcmp(out, "zzzz", 4), 0);
  EXPECT_EQ(fake.queued_ops(s), 0u);
}

TEST(FakeDeviceRuntimeTest, FreeingMemoryQueuedWorkUsesIsAViolation) {
  FakeDeviceRuntime fake;
  StreamHandle s = *fake.StreamCreate();
  void* dev = *fake.DeviceMalloc(16);
  void* pinned = *fake.PinnedHostMalloc(16);
  ASSERT_TRUE(fake.MemcpyHostToDeviceAsync(dev, pinned, 16, s).ok());
  ASSERT_TRUE(fake.PinnedHostFree(pinned).ok());
  ASSERT_TRUE(fake.StreamSynchronize(s).ok());
  std::vector<std::string> v = fake.violations();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], "cudaFreeHost: freed 16 bytes that a queued HtoD on stream 1 still uses");
  EXPECT_EQ(v[1], "HtoD of 16 bytes on stream 1 ran on memory freed after it was queued");
}

TEST(FakeDeviceRuntimeTest, RefusesCopiesWhoseDeviceSideIsNotDeviceMemory) {
  FakeDeviceRuntime fake;
  StreamHandle s = *fake.StreamCreate();
  char host[8];
  void* dev = *fake.DeviceMalloc(4);
  absl::Status outside = fake.MemcpyHostToDeviceAsync(host, host, 4, s);
  EXPECT_TRUE(absl::IsInvalidArgument(outside));
  EXPECT_EQ(outside.message(), "cudaMemcpyAsync(HostToDevice): invalid argument");
  // 8 bytes into a 4-byte allocation run past its end.
  EXPECT_TRUE(absl::IsInvalidArgument(fake.MemcpyHostToDeviceAsync(dev, host, 8, s)));
}

TEST(FakeDeviceRuntimeTest, CountsAllocationsAndEnforcesCapacity) {
  FakeDeviceRuntime::Options options;
  options.device_capacity_bytes = 1000;
  FakeDeviceRuntime fake(options);
  void* a = *fake.DeviceMalloc(600);
  absl::StatusOr<void*> b = fake.DeviceMalloc(600);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(b.status()));
  EXPECT_EQ(b.status().message(), "cudaMalloc: out of memory (600 bytes)");
  EXPECT_EQ(fake.device_allocations(), 1);
  EXPECT_EQ(fake.device_bytes_live(), 600);
  ASSERT_TRUE(fake.DeviceFree(a).ok());
  EXPECT_EQ(fake.device_frees(), 1);
  EXPECT_EQ(fake.device_bytes_live(), 0);
  EXPECT_EQ(fake.calls("DeviceMalloc"), 2);
}

TEST(FakeDeviceRuntimeTest, WaitOnAnotherStreamRunsItsProducerFirst) {
  FakeDeviceRuntime fake;
  StreamHandle producer = *fake.StreamCreate();
  StreamHandle consumer = *fake.StreamCreate();
  char* a = static_cast<char*>(*fake.DeviceMalloc(4));
  char* b = static_cast<char*>(*fake.DeviceMalloc(4));
  ASSERT_TRUE(fake.MemsetAsync(a, 'x', 4, producer).ok());
  EventHandle done = *fake.EventCreate();
  ASSERT_TRUE(fake.EventRecord(done, producer).ok());
  ASSERT_TRUE(fake.StreamWaitEvent(consumer, done).ok());
  ASSERT_TRUE(fake.MemcpyDeviceToDeviceAsync(b, a, 4, consumer).ok());
  ASSERT_TRUE(fake.StreamSynchronize(consumer).ok());
  EXPECT_EQ(std::memcmp(b, "xxxx", 4), 0);
  std::vector<FakeDeviceRuntime::ExecutedOp> ran = fake.executed();
  ASSERT_EQ(ran.size(), 4u);
  EXPECT_EQ(ran[0].kind, "Memset");
  EXPECT_EQ(ran[0].stream, 1);
  EXPECT_EQ(ran[1].kind, "Record");
  EXPECT_EQ(ran[2].kind, "Wait");
  EXPECT_EQ(ran[2].stream, 2);
  EXPECT_EQ(ran[3].kind, "DtoD");
}

TEST(FakeDeviceRuntimeTest, CaptureRecordsInsteadOfRunningAndBarsUnsafeCalls) {
  FakeDeviceRuntime fake;
  StreamHandle s = *fake.StreamCreate();
  char* dev = static_cast<char*>(*fake.DeviceMalloc(4));
  ASSERT_TRUE(fake.BeginCapture(s).ok());
  ASSERT_TRUE(fake.MemsetAsync(dev, 'c', 4, s).ok());
  EXPECT_EQ(fake.queued_ops(s), 0u);
  absl::StatusOr<void*> barred = fake.DeviceMalloc(4);
  EXPECT_EQ(barred.status().message(), "cudaMalloc: operation not permitted when stream is capturing");
  absl::StatusOr<GraphHandle> graph = fake.EndCapture(s);
  ASSERT_FALSE(graph.ok());  // the malloc invalidated the capture
  EXPECT_NE(graph.status().message().find("previous error during capture"), absl::string_view::npos);

  ASSERT_TRUE(fake.BeginCapture(s).ok());
  ASSERT_TRUE(fake.MemsetAsync(dev, 'g', 4, s).ok());
  graph = fake.EndCapture(s);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(fake.graph_ops(*graph), 1u);
  GraphExecHandle exec = *fake.GraphInstantiate(*graph);
  ASSERT_TRUE(fake.GraphLaunch(exec, s).ok());
  ASSERT_TRUE(fake.StreamSynchronize(s).ok());
  EXPECT_EQ(std::memcmp(dev, "gggg", 4), 0);
}

TEST(FakeDeviceRuntimeTest, InjectedFailureHitsTheNextCallOnly) {
  FakeDeviceRuntime fake;
  fake.FailNextCall("StreamCreate", absl::InternalError("cudaStreamCreateWithFlags: boom"));
  absl::StatusOr<StreamHandle> first = fake.StreamCreate();
  EXPECT_EQ(first.status().message(), "cudaStreamCreateWithFlags: boom");
  EXPECT_TRUE(fake.StreamCreate().ok());
}

TEST(FakeDeviceRuntimeTest, NoDriverFailsDeviceCount) {
  FakeDeviceRuntime::Options options;
  options.device_count_error = "CUDA driver version is insufficient for CUDA runtime version";
  FakeDeviceRuntime fake(options);
  absl::StatusOr<int> count = fake.DeviceCount();
  EXPECT_TRUE(absl::IsUnavailable(count.status()));
  EXPECT_EQ(count.status().message(),
            "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version");
}

}  // namespace
}  // namespace onyx
