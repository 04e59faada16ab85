#include "providers/cuda/cuda_memcpy.h"

#include <cstring>
#include <memory>
#include <vector>

#include "graph/op_domains.h"
#include "gtest/gtest.h"
#include "providers/cuda/cuda_allocator.h"
#include "providers/cuda/fake_device_runtime.h"

namespace onyx {
namespace {

struct Fixture {
  explicit Fixture(FakeDeviceRuntime::Options options = {}, size_t segment_bytes = 1 << 20, bool arena = false)
      : fake(std::make_shared<FakeDeviceRuntime>(options)), pinned(std::make_shared<PinnedHostAllocator>(fake)) {
    DeviceLane::Config config;
    config.runtime = fake;
    config.staging = arena ? std::shared_ptr<IAllocator>(MakeOwningArena(pinned, BFCArena::Options{}))
                           : std::shared_ptr<IAllocator>(pinned);
    config.options.workspace_bytes = 0;
    config.options.staging_segment_bytes = segment_bytes;
    lane = *DeviceLane::Create(config);
  }
  char* Device(size_t bytes) { return static_cast<char*>(*fake->DeviceMalloc(bytes)); }

  std::shared_ptr<FakeDeviceRuntime> fake;
  std::shared_ptr<PinnedHostAllocator> pinned;
  std::unique_ptr<DeviceLane> lane;
};

std::vector<char> Pattern(size_t n, char seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(seed + i % 7);
  return v;
}

TEST(CudaMemcpyTest, PlansSegments) {
  EXPECT_EQ(PlanCopySegments(40, 16), (std::vector<CopySegment>{{0, 16}, {16, 16}, {32, 8}}));
  EXPECT_EQ(PlanCopySegments(32, 16), (std::vector<CopySegment>{{0, 16}, {16, 16}}));
  EXPECT_EQ(PlanCopySegments(5, 0), (std::vector<CopySegment>{{0, 5}}));
  EXPECT_TRUE(PlanCopySegments(0, 16).empty());
}

TEST(CudaMemcpyTest, StagingIsReleasedOnlyAfterTheCopyRan) {
  Fixture f;
  char* dev = f.Device(256);
  std::vector<char> host = Pattern(256, 'a');
  const std::vector<char> expected = host;
  ASSERT_TRUE(CopyHostToDevice(*f.lane, dev, host.data(), 256).ok());
  std::memset(host.data(), 0, 256);                     // the source may change once the call returned
  EXPECT_EQ(f.fake->queued_ops(f.lane->stream()), 2u);  // the copy and its event
  EXPECT_EQ(f.lane->pending_staging(), 1u);
  ASSERT_TRUE(f.lane->ReapStaging().ok());
  EXPECT_EQ(f.lane->pending_staging(), 1u);  // its event has not completed
  EXPECT_EQ(f.pinned->counters().frees, 0);

  ASSERT_TRUE(f.fake->StreamSynchronize(f.lane->stream()).ok());
  EXPECT_EQ(std::memcmp(dev, expected.data(), 256), 0);
  ASSERT_TRUE(f.lane->ReapStaging().ok());
  EXPECT_EQ(f.lane->pending_staging(), 0u);
  EXPECT_EQ(f.pinned->counters().allocations, 1);
  EXPECT_EQ(f.pinned->counters().frees, 1);
  EXPECT_TRUE(f.fake->violations().empty());
}

TEST(CudaMemcpyTest, ArenaDoesNotReuseAStagingBufferWhileItsCopyIsQueued) {
  // Staging from an arena: an early release would hand the first buffer to
  // the second copy, and both device buffers would end up with its bytes.
  Fixture f({}, 1 << 20, /*arena=*/true);
  char* a = f.Device(256);
  char* b = f.Device(256);
  std::vector<char> first = Pattern(256, 'a');
  std::vector<char> second = Pattern(256, 'K');
  ASSERT_TRUE(CopyHostToDevice(*f.lane, a, first.data(), 256).ok());
  ASSERT_TRUE(CopyHostToDevice(*f.lane, b, second.data(), 256).ok());
  EXPECT_EQ(f.lane->pending_staging(), 2u);
  ASSERT_TRUE(f.fake->StreamSynchronize(f.lane->stream()).ok());
  EXPECT_EQ(std::memcmp(a, first.data(), 256), 0);
  EXPECT_EQ(std::memcmp(b, second.data(), 256), 0);
  EXPECT_EQ(f.pinned->counters().allocations, 1);  // one 1 MiB arena region for both
}

TEST(CudaMemcpyTest, CopiesRunOnTheLanesStream) {
  Fixture f;
  StreamHandle other = *f.fake->StreamCreate();
  ASSERT_NE(other, f.lane->stream());
  char* dev = f.Device(64);
  std::vector<char> in = Pattern(64, 'x');
  std::vector<char> out(64);
  ASSERT_TRUE(CopyHostToDevice(*f.lane, dev, in.data(), 64).ok());
  ASSERT_TRUE(CopyDeviceToHost(*f.lane, out.data(), dev, 64).ok());
  EXPECT_EQ(out, in);
  const int lane_stream = f.fake->stream_id(f.lane->stream());
  std::vector<FakeDeviceRuntime::ExecutedOp> ran = f.fake->executed();
  ASSERT_EQ(ran.size(), 4u);  // HtoD, Record, DtoH, Record
  for (const auto& op : ran) EXPECT_EQ(op.stream, lane_stream) << op.kind;
  EXPECT_EQ(ran[0].kind, "HtoD");
  EXPECT_EQ(ran[2].kind, "DtoH");
}

TEST(CudaMemcpyTest, DeviceToHostReturnsWithTheDataInSegments) {
  Fixture f({}, /*segment_bytes=*/100);
  char* dev = f.Device(250);
  std::vector<char> expected = Pattern(250, '0');
  std::memcpy(dev, expected.data(), 250);  // fake device memory is host memory
  std::vector<char> out(250);
  ASSERT_TRUE(CopyDeviceToHost(*f.lane, out.data(), dev, 250).ok());
  EXPECT_EQ(out, expected);
  std::vector<size_t> copies;
  for (const auto& op : f.fake->executed()) {
    if (op.kind == "DtoH") copies.push_back(op.bytes);
  }
  EXPECT_EQ(copies, (std::vector<size_t>{100, 100, 50}));
  EXPECT_EQ(f.pinned->counters().allocations, 3);
  EXPECT_EQ(f.pinned->counters().frees, 3);
  EXPECT_EQ(f.lane->pending_staging(), 0u);
  EXPECT_TRUE(f.fake->violations().empty());
}

TEST(CudaMemcpyTest, WaitsForTheOldestStagingBufferWhenPinnedMemoryIsFull) {
  FakeDeviceRuntime::Options options;
  options.pinned_capacity_bytes = 300;  // room for one 256-byte staging buffer
  Fixture f(options);
  char* a = f.Device(256);
  char* b = f.Device(256);
  std::vector<char> first = Pattern(256, 'a');
  std::vector<char> second = Pattern(256, 'Q');
  ASSERT_TRUE(CopyHostToDevice(*f.lane, a, first.data(), 256).ok());
  ASSERT_TRUE(CopyHostToDevice(*f.lane, b, second.data(), 256).ok());
  EXPECT_EQ(f.fake->calls("EventSynchronize"), 1);
  EXPECT_EQ(f.pinned->counters().frees, 1);
  ASSERT_TRUE(f.fake->StreamSynchronize(f.lane->stream()).ok());
  EXPECT_EQ(std::memcmp(a, first.data(), 256), 0);
  EXPECT_EQ(std::memcmp(b, second.data(), 256), 0);
  EXPECT_TRUE(f.fake->violations().empty());
}

TEST(CudaMemcpyTest, CopiesDirectlyWhenThereIsNoPinnedMemory) {
  FakeDeviceRuntime::Options options;
  options.pinned_capacity_bytes = 0;
  Fixture f(options);
  char* dev = f.Device(32);
  std::vector<char> in = Pattern(32, 'd');
  std::vector<char> out(32);
  ASSERT_TRUE(CopyHostToDevice(*f.lane, dev, in.data(), 32).ok());
  ASSERT_TRUE(CopyDeviceToHost(*f.lane, out.data(), dev, 32).ok());
  EXPECT_EQ(out, in);
  EXPECT_EQ(f.pinned->counters().allocations, 0);
}

// OpKernelContext over vectors, allocating outputs from a device arena.
class TestContext final : public OpKernelContext {
 public:
  TestContext(const Node& node, std::vector<Value> inputs, BFCArena* arena)
      : node_(node), inputs_(std::move(inputs)), outputs_(1), arena_(arena) {}
  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Value* InputValue(int i) const override { return &inputs_[i]; }
  int OutputCount() const override { return 1; }
  bool OutputRequested(int) const override { return true; }
  void SetOutput(int i, Value value) override { outputs_[i] = std::move(value); }
  Tensor* OutputTensor(int i) override { return outputs_[i].is_tensor() ? &outputs_[i].mutable_tensor() : nullptr; }
  const Node& node() const override { return node_; }
  absl::Status RunSubgraph(const ExecutionPlan&, const std::vector<Value>&, std::vector<Value>*) override {
    return absl::UnimplementedError("no subgraphs");
  }
  Value& output() { return outputs_[0]; }
  int zero_filled = 0;

 protected:
  absl::StatusOr<Tensor*> AllocateOutput(int i, absl::Span<const int64_t> dims, DataType type,
                                         bool zero_fill) override {
    zero_filled += zero_fill ? 1 : 0;
    const size_t bytes = static_cast<size_t>(NumElements(dims)) * ElementSize(type);
    absl::StatusOr<void*> p = arena_->Allocate(bytes);
    if (!p.ok()) return p.status();
    outputs_[i] = Value(Tensor::FromBuffer(type, dims, *p, arena_->OwnChunk(*p)));
    return &outputs_[i].mutable_tensor();
  }

 private:
  const Node& node_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  BFCArena* arena_;
};

std::unique_ptr<OpKernel> MakeKernel(const KernelRegistry& registry, const char* op, const Node& node,
                                     const Graph& graph) {
  std::vector<const KernelRegistry::Entry*> entries = registry.Entries(kOnyxDomain, op);
  EXPECT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]->def.provider, "cuda");
  return *entries[0]->factory(OpKernelInfo(node, graph, nullptr, nullptr));
}

TEST(CudaMemcpyTest, KernelsCopyToTheDeviceArenaAndBackToHost) {
  Fixture f;
  std::shared_ptr<BFCArena> arena = MakeOwningArena(std::make_shared<DeviceAllocator>(f.fake, 0), {});
  std::unique_ptr<Graph> graph = *Graph::FromProto(onnx::GraphProto(), {}, "");
  Node up;
  up.name = "up";
  up.op_type = "MemcpyFromHost";
  Node down;
  down.name = "down";
  down.op_type = "MemcpyToHost";
  KernelRegistry registry;
  RegisterMemcpyKernels(registry);
  std::unique_ptr<OpKernel> from_host = MakeKernel(registry, "MemcpyFromHost", up, *graph);
  std::unique_ptr<OpKernel> to_host = MakeKernel(registry, "MemcpyToHost", down, *graph);

  Tensor x = Tensor::Allocate(DataType::kFloat, {2, 3});
  for (int i = 0; i < 6; ++i) x.mutable_data<float>()[i] = 1.5f * i;
  ScopedLane install(f.lane.get());
  TestContext upload(up, {Value(x)}, arena.get());
  ASSERT_TRUE(from_host->Compute(upload).ok());
  EXPECT_EQ(upload.zero_filled, 0);  // device outputs are allocated for overwrite
  const Tensor& on_device = upload.output().tensor();
  EXPECT_EQ(on_device.dims(), (Dims{2, 3}));
  EXPECT_NE(on_device.raw(), x.raw());

  TestContext download(down, {upload.output()}, arena.get());
  ASSERT_TRUE(to_host->Compute(download).ok());
  const Tensor& y = download.output().tensor();
  ASSERT_EQ(y.type(), DataType::kFloat);
  EXPECT_EQ(y.dims(), (Dims{2, 3}));
  const float expected[6] = {0.0f, 1.5f, 3.0f, 4.5f, 6.0f, 7.5f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], expected[i]) << i;
}

TEST(CudaMemcpyTest, KernelsRefuseStringsAndRunOnlyOnALane) {
  Fixture f;
  std::shared_ptr<BFCArena> arena = MakeOwningArena(std::make_shared<DeviceAllocator>(f.fake, 0), {});
  std::unique_ptr<Graph> graph = *Graph::FromProto(onnx::GraphProto(), {}, "");
  Node up;
  up.name = "up";
  up.op_type = "MemcpyFromHost";
  KernelRegistry registry;
  RegisterMemcpyKernels(registry);
  std::unique_ptr<OpKernel> kernel = MakeKernel(registry, "MemcpyFromHost", up, *graph);
  Tensor x = Tensor::Allocate(DataType::kFloat, {4});

  TestContext off_lane(up, {Value(x)}, arena.get());
  absl::Status status = kernel->Compute(off_lane);
  EXPECT_TRUE(absl::IsFailedPrecondition(status));
  EXPECT_EQ(status.message().rfind("MemcpyFromHost 'up': no CUDA lane on this thread", 0), 0u) << status;

  ScopedLane install(f.lane.get());
  TestContext strings(up, {Value(Tensor::Allocate(DataType::kString, {1}))}, arena.get());
  status = kernel->Compute(strings);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("string tensors cannot live in CUDA device memory"), absl::string_view::npos);
}

}  // namespace
}  // namespace onyx
