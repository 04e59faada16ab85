// Tests of the real CUDA runtime (cuda_device_tests, built with the toolkit).
// Without a usable device only the "no device" path is checked; the others
// are skipped.
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cuda/cuda_allocator.h"
#include "providers/cuda/cuda_lane.h"
#include "providers/cuda/cuda_memcpy.h"
#include "providers/cuda/cuda_provider.h"
#include "providers/cuda/graph_capture.h"

namespace onyx {
namespace {

bool HaveDevice(DeviceRuntime& rt) {
  absl::StatusOr<int> count = rt.DeviceCount();
  return count.ok() && *count > 0;
}

// Why a GPU test cannot run here, for its skip message.
std::string NoDeviceReason(DeviceRuntime& rt) {
  absl::StatusOr<int> count = rt.DeviceCount();
  return count.ok() ? "no usable CUDA device: the runtime counts 0"
                    : "no usable CUDA device: " + std::string(count.status().message());
}

TEST(CudaDeviceRuntimeTest, CountsDevicesOrSaysWhyNot) {
  std::shared_ptr<DeviceRuntime> rt = CreateCudaDeviceRuntime();
  absl::StatusOr<int> count = rt->DeviceCount();
  if (count.ok()) {
    EXPECT_GE(*count, 0);
  } else {
    EXPECT_TRUE(absl::IsUnavailable(count.status())) << count.status();
    EXPECT_EQ(count.status().message().rfind("cudaGetDeviceCount: ", 0), 0u) << count.status();
  }
}

TEST(CudaDeviceRuntimeTest, ProviderIsUnavailableWithoutADevice) {
  CudaExecutionProvider::Dependencies deps;
  deps.runtime = CreateCudaDeviceRuntime();
  deps.lane_resources = CreateCudaLaneResources;
  const bool have_device = HaveDevice(*deps.runtime);
  auto provider = CudaExecutionProvider::Create(ProviderOptions{}, deps);
  if (have_device) {
    ASSERT_TRUE(provider.ok()) << provider.status();
    EXPECT_STREQ((*provider)->device(), "cuda:0");
  } else {
    EXPECT_TRUE(absl::IsUnavailable(provider.status())) << provider.status();
    EXPECT_EQ(provider.status().message().rfind("execution provider 'cuda': no CUDA device (cudaGetDeviceCount: ", 0),
              0u)
        << provider.status();
  }
}

std::unique_ptr<DeviceLane> RealLane(const std::shared_ptr<DeviceRuntime>& rt, size_t segment_bytes) {
  DeviceLane::Config config;
  config.runtime = rt;
  config.staging = MakeOwningArena(std::make_shared<PinnedHostAllocator>(rt), BFCArena::Options{});
  config.options.staging_segment_bytes = segment_bytes;
  config.resources = CreateCudaLaneResources;
  absl::StatusOr<std::unique_ptr<DeviceLane>> lane = DeviceLane::Create(config);
  EXPECT_TRUE(lane.ok()) << lane.status();
  return lane.ok() ? *std::move(lane) : nullptr;
}

TEST(CudaDeviceRuntimeTest, LaneHasHandlesAndCopiesRoundTrip) {
  std::shared_ptr<DeviceRuntime> rt = CreateCudaDeviceRuntime();
  if (!HaveDevice(*rt)) GTEST_SKIP() << NoDeviceReason(*rt);
  std::unique_ptr<DeviceLane> lane = RealLane(rt, 256 << 10);
  ASSERT_NE(lane, nullptr);
  const CudaLane* cuda = CudaLaneOf(*lane);
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(reinterpret_cast<StreamHandle>(cuda->stream), lane->stream());
  EXPECT_NE(cuda->cublas, nullptr);
  EXPECT_NE(cuda->cublaslt, nullptr);
  EXPECT_NE(cuda->cudnn, nullptr);
  EXPECT_EQ(cuda->workspace, lane->workspace());

  const size_t bytes = (1 << 20) + 123;  // five segments, the last one short
  std::vector<unsigned char> in(bytes), out(bytes);
  for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  DeviceAllocator device(rt, 0);
  void* dev = *device.Allocate(bytes);
  ASSERT_TRUE(CopyHostToDevice(*lane, dev, in.data(), bytes).ok());
  ASSERT_TRUE(CopyDeviceToHost(*lane, out.data(), dev, bytes).ok());
  EXPECT_EQ(out, in);
  ASSERT_TRUE(lane->Synchronize().ok());
  EXPECT_EQ(lane->pending_staging(), 0u);
  device.Free(dev);
}

TEST(CudaDeviceRuntimeTest, CapturedGraphReplaysWithFreshData) {
  std::shared_ptr<DeviceRuntime> rt = CreateCudaDeviceRuntime();
  if (!HaveDevice(*rt)) GTEST_SKIP() << NoDeviceReason(*rt);
  std::unique_ptr<DeviceLane> lane = RealLane(rt, 1 << 20);
  ASSERT_NE(lane, nullptr);
  DeviceAllocator device(rt, 0);
  void* a = *device.Allocate(4);
  void* b = *device.Allocate(4);
  CaptureController capture(rt, {.warmup_runs = 1});
  auto body = [&] { return rt->MemcpyDeviceToDeviceAsync(b, a, 4, lane->stream()); };
  for (const char* word : {"warm", "capt", "play"}) {
    ASSERT_TRUE(CopyHostToDevice(*lane, a, word, 4).ok());
    ASSERT_TRUE(capture.Run(lane->stream(), body).ok());
    char out[4] = {};
    ASSERT_TRUE(CopyDeviceToHost(*lane, out, b, 4).ok());
    EXPECT_EQ(std::memcmp(out, word, 4), 0) << word;
  }
  EXPECT_EQ(capture.state(), CaptureController::State::kReplaying);
  EXPECT_EQ(capture.replays(), 2);
  ASSERT_TRUE(lane->Synchronize().ok());
  device.Free(a);
  device.Free(b);
}

}  // namespace
}  // namespace onyx
