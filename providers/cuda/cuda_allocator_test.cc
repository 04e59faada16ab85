#include "providers/cuda/cuda_allocator.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cuda/fake_device_runtime.h"

namespace onyx {
namespace {

TEST(CudaAllocatorTest, DeviceAllocatorCountsAndIsNotHostAccessible) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  DeviceAllocator device(fake, 0);
  EXPECT_STREQ(device.device(), "cuda:0");
  EXPECT_FALSE(device.host_accessible());
  void* a = *device.Allocate(1000);
  void* b = *device.Allocate(24);
  EXPECT_EQ(device.counters().allocations, 2);
  EXPECT_EQ(device.counters().bytes_in_use, 1024);
  device.Free(a);
  EXPECT_EQ(device.counters().frees, 1);
  EXPECT_EQ(device.counters().bytes_in_use, 24);
  device.Free(b);
  EXPECT_EQ(fake->device_allocations(), 2);
  EXPECT_EQ(fake->device_frees(), 2);
  EXPECT_EQ(fake->device_bytes_live(), 0);
}

TEST(CudaAllocatorTest, AllocatesOnItsOwnDeviceAndRestoresTheCallers) {
  FakeDeviceRuntime::Options options;
  options.device_count = 2;
  auto fake = std::make_shared<FakeDeviceRuntime>(options);
  DeviceAllocator device(fake, 1);
  EXPECT_STREQ(device.device(), "cuda:1");
  ASSERT_TRUE(fake->SetDevice(0).ok());
  void* p = *device.Allocate(64);
  EXPECT_EQ(*fake->GetDevice(), 0);
  EXPECT_EQ(fake->calls("SetDevice"), 3);  // ours, to 1, back to 0
  device.Free(p);
}

TEST(CudaAllocatorTest, OutOfDeviceMemoryIsResourceExhaustedNamingTheDevice) {
  FakeDeviceRuntime::Options options;
  options.device_capacity_bytes = 4096;
  auto fake = std::make_shared<FakeDeviceRuntime>(options);
  DeviceAllocator device(fake, 0);
  absl::StatusOr<void*> p = device.Allocate(8192);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(p.status()));
  EXPECT_EQ(p.status().message(), "cuda:0: cudaMalloc: out of memory (8192 bytes)");
  EXPECT_EQ(device.counters().allocations, 0);
}

TEST(CudaAllocatorTest, WarmArenaMakesNoDeviceAllocations) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto device = std::make_shared<DeviceAllocator>(fake, 0);
  BFCArena::Options options;
  options.initial_chunk_bytes = 1 << 20;
  options.name = "cuda:0";
  std::shared_ptr<BFCArena> arena = MakeOwningArena(device, options);
  EXPECT_FALSE(arena->host_accessible());
  const std::vector<size_t> sizes = {1000, 4096, 70000};  // 75,264 bytes rounded: one 1 MiB region
  for (int run = 0; run < 100; ++run) {
    std::vector<void*> live;
    for (size_t s : sizes) live.push_back(*arena->Allocate(s));
    for (void* p : live) arena->Free(p);
    EXPECT_EQ(device->counters().allocations, 1) << "run " << run;
  }
  EXPECT_EQ(fake->device_allocations(), 1);
  EXPECT_EQ(fake->device_bytes_live(), 1 << 20);
  // Past the first region: the next is the next power of two, 2 MiB.
  void* big = *arena->Allocate(1536 * 1024);
  EXPECT_EQ(device->counters().allocations, 2);
  EXPECT_EQ(fake->device_bytes_live(), 3 << 20);
  arena->Free(big);
  arena.reset();  // regions go back to the device
  EXPECT_EQ(fake->device_bytes_live(), 0);
}

TEST(CudaAllocatorTest, ArenaLimitIsResourceExhausted) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  BFCArena::Options options;
  options.max_bytes = 1 << 20;
  options.name = "cuda:0";
  std::shared_ptr<BFCArena> arena = MakeOwningArena(std::make_shared<DeviceAllocator>(fake, 0), options);
  ASSERT_TRUE(arena->Allocate(1000).ok());
  absl::StatusOr<void*> over = arena->Allocate(2 << 20);
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(over.status()));
  EXPECT_NE(over.status().message().find("exceed the limit of 1048576 bytes"), absl::string_view::npos)
      << over.status();
  EXPECT_EQ(fake->device_allocations(), 1);
}

TEST(CudaAllocatorTest, OwningArenaOutlivesItsLastHandleThroughChunks) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  std::shared_ptr<BFCArena> arena = MakeOwningArena(std::make_shared<DeviceAllocator>(fake, 0), BFCArena::Options{});
  std::shared_ptr<void> chunk = arena->OwnChunk(*arena->Allocate(256));
  arena.reset();
  EXPECT_EQ(fake->device_bytes_live(), 1 << 20);  // the chunk keeps arena and allocator alive
  chunk.reset();
  EXPECT_EQ(fake->device_bytes_live(), 0);
}

TEST(CudaAllocatorTest, PinnedAllocatorIsHostMemoryFromTheRuntime) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  PinnedHostAllocator pinned(fake);
  EXPECT_TRUE(pinned.host_accessible());
  void* p = *pinned.Allocate(300);
  static_cast<char*>(p)[299] = 1;  // writable from the host
  EXPECT_EQ(fake->pinned_allocations(), 1);
  EXPECT_EQ(pinned.counters().bytes_in_use, 300);
  pinned.Free(p);
  EXPECT_EQ(fake->pinned_frees(), 1);
  EXPECT_EQ(pinned.counters().bytes_in_use, 0);
}

}  // namespace
}  // namespace onyx
