#include "providers/cuda/cuda_stream.h"

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cuda/cuda_allocator.h"
#include "providers/cuda/fake_device_runtime.h"

namespace onyx {
namespace {

std::shared_ptr<LanePool> MakePool(const std::shared_ptr<FakeDeviceRuntime>& fake,
                                   LaneResourcesFactory resources = {}) {
  LanePool::Options options;
  options.runtime = fake;
  options.staging = std::make_shared<PinnedHostAllocator>(fake);
  options.lane.workspace_bytes = 4096;
  options.resources = std::move(resources);
  return std::make_shared<LanePool>(std::move(options));
}

// Stands in for the CUDA build's handles: remembers what it was given.
class RecordingResources final : public LaneResources {
 public:
  explicit RecordingResources(const LaneResourceRequest& r) : request(r) {}
  const void* native() const override { return &request; }
  LaneResourceRequest request;
};

TEST(CudaStreamTest, RunsWorkInOrderOnOneThreadWithTheLaneInstalled) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto pool = MakePool(fake);
  std::vector<int> order;
  std::vector<DeviceLane*> lanes;
  std::set<std::thread::id> threads;
  {
    CudaStream stream(pool);
    for (int i = 0; i < 50; ++i) {
      stream.Submit([&, i] {
        order.push_back(i);
        lanes.push_back(CurrentDeviceLane());
        threads.insert(std::this_thread::get_id());
      });
    }
  }  // the destructor runs the queued work first
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
  ASSERT_NE(lanes[0], nullptr);
  for (DeviceLane* lane : lanes) EXPECT_EQ(lane, lanes[0]);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
  EXPECT_EQ(CurrentDeviceLane(), nullptr);  // installed on the worker only
  EXPECT_EQ(fake->calls("StreamCreate"), 1);
  EXPECT_EQ(pool->idle(), 1u);  // the lane went back to the pool
}

TEST(CudaStreamTest, MakingAStreamTakesNoLaneUntilWorkArrives) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto pool = MakePool(fake);
  { CudaStream probe(pool); }
  EXPECT_EQ(fake->calls("StreamCreate"), 0);
  EXPECT_EQ(pool->created(), 0);
}

TEST(CudaStreamTest, LanesAreReusedAcrossStreams) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto pool = MakePool(fake);
  ASSERT_TRUE(pool->Prewarm().ok());
  DeviceLane* first = nullptr;
  DeviceLane* second = nullptr;
  {
    CudaStream a(pool);
    a.Submit([&] { first = CurrentDeviceLane(); });
  }
  {
    CudaStream b(pool);
    b.Submit([&] { second = CurrentDeviceLane(); });
  }
  EXPECT_NE(first, nullptr);
  EXPECT_EQ(first, second);
  EXPECT_EQ(pool->created(), 1);
  EXPECT_EQ(fake->calls("StreamCreate"), 1);
  EXPECT_EQ(fake->device_allocations(), 1);  // one workspace
}

TEST(CudaStreamTest, WorkStillRunsWithTheErrorWhenNoLaneCanBeMade) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto pool = MakePool(fake);
  fake->FailNextCall("StreamCreate", absl::ResourceExhaustedError("cudaStreamCreateWithFlags: out of memory"));
  absl::Status seen;
  {
    CudaStream stream(pool);
    stream.Submit([&] { seen = RequireCurrentLane().status(); });
  }
  EXPECT_TRUE(absl::IsResourceExhausted(seen)) << seen;
  EXPECT_EQ(seen.message(),
            "the CUDA lane of this session could not be set up: cudaStreamCreateWithFlags: out of memory");
}

TEST(CudaStreamTest, NoLaneOffTheStream) {
  absl::StatusOr<DeviceLane*> lane = RequireCurrentLane();
  EXPECT_TRUE(absl::IsFailedPrecondition(lane.status()));
  EXPECT_NE(lane.status().message().find("no CUDA lane on this thread"), absl::string_view::npos);
}

TEST(CudaStreamTest, ScopedLaneNestsAndRestores) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto pool = MakePool(fake);
  std::unique_ptr<DeviceLane> a = *pool->Acquire();
  std::unique_ptr<DeviceLane> b = *pool->Acquire();
  {
    ScopedLane outer(a.get());
    {
      ScopedLane inner(b.get());
      EXPECT_EQ(CurrentDeviceLane(), b.get());
    }
    EXPECT_EQ(CurrentDeviceLane(), a.get());
  }
  EXPECT_EQ(CurrentDeviceLane(), nullptr);
}

TEST(CudaStreamTest, LaneHandsItsStreamAndWorkspaceToTheResources) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  LanePool::Options options;
  options.runtime = fake;
  options.staging = std::make_shared<PinnedHostAllocator>(fake);
  options.lane.workspace_bytes = 4096;
  options.lane.allow_tf32 = true;
  options.resources = [](const LaneResourceRequest& r) -> absl::StatusOr<std::unique_ptr<LaneResources>> {
    return std::unique_ptr<LaneResources>(new RecordingResources(r));
  };
  LanePool pool(options);
  std::unique_ptr<DeviceLane> lane = *pool.Acquire();
  const auto* request = static_cast<const LaneResourceRequest*>(lane->resources()->native());
  EXPECT_EQ(request->stream, lane->stream());
  EXPECT_EQ(request->workspace, lane->workspace());
  EXPECT_EQ(request->workspace_bytes, 4096u);
  EXPECT_TRUE(request->allow_tf32);
  EXPECT_EQ(fake->device_bytes_live(), 4096);
}

TEST(CudaStreamTest, FailedResourcesUndoTheLane) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto pool = MakePool(fake, [](const LaneResourceRequest&) -> absl::StatusOr<std::unique_ptr<LaneResources>> {
    return absl::InternalError("cudnnCreate: CUDNN_STATUS_NOT_INITIALIZED");
  });
  absl::Status prewarm = pool->Prewarm();
  EXPECT_EQ(prewarm.message(), "cudnnCreate: CUDNN_STATUS_NOT_INITIALIZED");
  EXPECT_EQ(fake->calls("StreamDestroy"), 1);
  EXPECT_EQ(fake->device_bytes_live(), 0);  // the workspace went back
}

TEST(CudaStreamTest, DestroyingALaneWaitsForItsStagedCopies) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto staging = std::make_shared<PinnedHostAllocator>(fake);
  DeviceLane::Config config;
  config.runtime = fake;
  config.staging = staging;
  config.options.workspace_bytes = 0;
  std::unique_ptr<DeviceLane> lane = *DeviceLane::Create(config);
  void* dev = *fake->DeviceMalloc(64);
  void* buffer = *lane->AcquireStaging(64);
  ASSERT_TRUE(fake->MemcpyHostToDeviceAsync(dev, buffer, 64, lane->stream()).ok());
  ASSERT_TRUE(lane->ReleaseStagingAfterWork(buffer).ok());
  EXPECT_EQ(lane->pending_staging(), 1u);
  EXPECT_EQ(staging->counters().frees, 0);
  lane.reset();
  EXPECT_EQ(staging->counters().frees, 1);
  EXPECT_TRUE(fake->violations().empty());
  EXPECT_EQ(fake->calls("EventDestroy"), 1);
  EXPECT_EQ(fake->calls("StreamDestroy"), 1);
}

}  // namespace
}  // namespace onyx
