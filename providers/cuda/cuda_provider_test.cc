#include "providers/cuda/cuda_provider.h"

#include <memory>

#include "framework/device_arena.h"
#include "graph/op_domains.h"
#include "gtest/gtest.h"
#include "providers/cuda/fake_device_runtime.h"

namespace onyx {
namespace {

ProviderOptions Settings(std::map<std::string, std::string> settings) { return ProviderOptions{std::move(settings)}; }

CudaExecutionProvider::Dependencies Fake(std::shared_ptr<FakeDeviceRuntime> fake) {
  CudaExecutionProvider::Dependencies deps;
  deps.runtime = std::move(fake);
  return deps;
}

TEST(CudaProviderTest, ParsesOptions) {
  absl::StatusOr<CudaProviderOptions> o = ParseCudaProviderOptions(
      Settings({{"device_id", "1"}, {"tf32", "1"}, {"cuda_graph", "1"}, {"gpu_mem_limit", "8589934592"}}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->device_id, 1);
  EXPECT_TRUE(o->tf32);
  EXPECT_TRUE(o->cuda_graph);
  EXPECT_EQ(o->gpu_mem_limit, size_t{8} << 30);
  absl::StatusOr<CudaProviderOptions> defaults = ParseCudaProviderOptions(Settings({}));
  EXPECT_EQ(defaults->device_id, 0);
  EXPECT_FALSE(defaults->tf32);
  EXPECT_FALSE(defaults->cuda_graph);
  EXPECT_EQ(defaults->gpu_mem_limit, 0u);
}

TEST(CudaProviderTest, UnknownOptionNamesTheKnownOnes) {
  absl::Status s = ParseCudaProviderOptions(Settings({{"arena", "1"}})).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(),
            "execution provider 'cuda' has no option 'arena' (known: device_id, tf32, cuda_graph, gpu_mem_limit)");
}

TEST(CudaProviderTest, BadValuesSayWhatWasExpected) {
  EXPECT_EQ(ParseCudaProviderOptions(Settings({{"tf32", "yes"}})).status().message(),
            "execution provider 'cuda': option tf32 expects 0 or 1, received 'yes'");
  EXPECT_EQ(ParseCudaProviderOptions(Settings({{"cuda_graph", "2"}})).status().message(),
            "execution provider 'cuda': option cuda_graph expects 0 or 1, received '2'");
  EXPECT_EQ(ParseCudaProviderOptions(Settings({{"device_id", "-1"}})).status().message(),
            "execution provider 'cuda': option device_id expects a non-negative device ordinal, received '-1'");
  EXPECT_EQ(ParseCudaProviderOptions(Settings({{"gpu_mem_limit", "8GB"}})).status().message(),
            "execution provider 'cuda': option gpu_mem_limit expects a non-negative number of bytes, received '8GB'");
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCudaProviderOptions(Settings({{"gpu_mem_limit", "-1"}})).status()));
}

TEST(CudaProviderTest, NoDeviceIsUnavailableWithTheRuntimesReason) {
  FakeDeviceRuntime::Options options;
  options.device_count_error = "CUDA driver version is insufficient for CUDA runtime version";
  auto created = CudaExecutionProvider::Create(Settings({}), Fake(std::make_shared<FakeDeviceRuntime>(options)));
  ASSERT_FALSE(created.ok());
  EXPECT_TRUE(absl::IsUnavailable(created.status()));
  EXPECT_EQ(created.status().message(),
            "execution provider 'cuda': no CUDA device (cudaGetDeviceCount: CUDA driver version is insufficient for "
            "CUDA runtime version)");
}

TEST(CudaProviderTest, ZeroDevicesIsUnavailable) {
  FakeDeviceRuntime::Options options;
  options.device_count = 0;
  auto created = CudaExecutionProvider::Create(Settings({}), Fake(std::make_shared<FakeDeviceRuntime>(options)));
  EXPECT_TRUE(absl::IsUnavailable(created.status()));
  EXPECT_EQ(created.status().message(),
            "execution provider 'cuda': no CUDA device (cudaGetDeviceCount found 0 devices)");
}

TEST(CudaProviderTest, OptionErrorsComeBeforeTheDeviceCheck) {
  FakeDeviceRuntime::Options options;
  options.device_count = 0;
  auto fake = std::make_shared<FakeDeviceRuntime>(options);
  auto created = CudaExecutionProvider::Create(Settings({{"tf32", "on"}}), Fake(fake));
  EXPECT_TRUE(absl::IsInvalidArgument(created.status()));
  EXPECT_EQ(fake->calls("DeviceCount"), 0);
}

TEST(CudaProviderTest, DeviceIdBeyondTheVisibleDevices) {
  FakeDeviceRuntime::Options options;
  options.device_count = 2;
  auto created =
      CudaExecutionProvider::Create(Settings({{"device_id", "2"}}), Fake(std::make_shared<FakeDeviceRuntime>(options)));
  EXPECT_TRUE(absl::IsInvalidArgument(created.status()));
  EXPECT_EQ(created.status().message(),
            "execution provider 'cuda': option device_id expects a device below 2 (the CUDA devices visible), "
            "received '2'");
}

TEST(CudaProviderTest, DescribesItsDeviceArenaAndKernels) {
  FakeDeviceRuntime::Options options;
  options.device_count = 2;
  auto fake = std::make_shared<FakeDeviceRuntime>(options);
  CudaExecutionProvider::Dependencies deps = Fake(fake);
  int registered = 0;
  deps.register_kernels = [&](KernelRegistry& registry) { registered = static_cast<int>(registry.size()); };
  auto created = CudaExecutionProvider::Create(Settings({{"device_id", "1"}}), std::move(deps));
  ASSERT_TRUE(created.ok()) << created.status();
  const CudaExecutionProvider& p = **created;
  EXPECT_STREQ(p.name(), "cuda");
  EXPECT_STREQ(p.device(), "cuda:1");
  EXPECT_TRUE(p.ConstantInputsOnHost());
  ASSERT_NE(p.arena(), nullptr);
  EXPECT_STREQ(p.arena()->device(), "cuda:1");
  EXPECT_FALSE(p.arena()->host_accessible());
  EXPECT_EQ(registered, 2);  // the device kernels are added after the two Memcpy kernels
  EXPECT_EQ(p.kernel_registry().Entries(kOnyxDomain, "MemcpyFromHost").size(), 1u);
  EXPECT_EQ(p.kernel_registry().Entries(kOnyxDomain, "MemcpyToHost").size(), 1u);
  bool listed = false;
  for (const LiveArena& a : LiveArenas()) listed |= a.device == "cuda:1" && a.arena.get() == p.arena();
  EXPECT_TRUE(listed);
  EXPECT_EQ(p.lanes().created(), 1);  // set up front
}

TEST(CudaProviderTest, GpuMemLimitCapsTheArena) {
  auto created = CudaExecutionProvider::Create(Settings({{"gpu_mem_limit", "1048576"}}),
                                               Fake(std::make_shared<FakeDeviceRuntime>()));
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<void*> p = (*created)->arena()->Allocate(2 << 20);
  EXPECT_TRUE(absl::IsResourceExhausted(p.status()));
}

TEST(CudaProviderTest, LaneSetupFailureFailsCreation) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  fake->FailNextCall("StreamCreate", absl::InternalError("cudaStreamCreateWithFlags: unknown error"));
  auto created = CudaExecutionProvider::Create(Settings({}), Fake(fake));
  EXPECT_TRUE(absl::IsInternal(created.status()));
  EXPECT_EQ(created.status().message(),
            "execution provider 'cuda': setting up a stream on cuda:0 failed: cudaStreamCreateWithFlags: unknown "
            "error");
}

TEST(CudaProviderTest, StreamsRunWorkOnTheSetUpLane) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto created = CudaExecutionProvider::Create(Settings({}), Fake(fake));
  ASSERT_TRUE(created.ok()) << created.status();
  DeviceLane* lane = nullptr;
  {
    std::unique_ptr<Stream> stream = (*created)->CreateStream();
    ASSERT_NE(stream, nullptr);
    stream->Submit([&] { lane = CurrentDeviceLane(); });
  }
  EXPECT_NE(lane, nullptr);
  EXPECT_EQ((*created)->lanes().created(), 1);
  EXPECT_EQ(fake->calls("StreamCreate"), 1);
}

TEST(CudaProviderTest, UploadsAConstantOnceAndCopiesBothWays) {
  auto fake = std::make_shared<FakeDeviceRuntime>();
  auto created = CudaExecutionProvider::Create(Settings({}), Fake(fake));
  ASSERT_TRUE(created.ok()) << created.status();
  const CudaExecutionProvider& p = **created;
  Tensor w = Tensor::Allocate(DataType::kFloat, {4});
  for (int i = 0; i < 4; ++i) w.mutable_data<float>()[i] = 0.25f * (i + 1);
  absl::StatusOr<Tensor> first = p.UploadConstant(w);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Tensor> again = p.UploadConstant(w);
  EXPECT_EQ(again->raw(), first->raw());
  EXPECT_NE(first->raw(), w.raw());
  EXPECT_EQ(first->dims(), (Dims{4}));

  Tensor back = Tensor::Allocate(DataType::kFloat, {4});
  ASSERT_TRUE(p.CopyToHost(*first, back).ok());
  const float expected[4] = {0.25f, 0.5f, 0.75f, 1.0f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back.data<float>()[i], expected[i]);

  Tensor device = *p.UploadConstant(Tensor::Allocate(DataType::kFloat, {4}));
  ASSERT_TRUE(p.CopyFromHost(back, device).ok());
  Tensor again_back = Tensor::Allocate(DataType::kFloat, {4});
  ASSERT_TRUE(p.CopyToHost(device, again_back).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(again_back.data<float>()[i], expected[i]);

  Tensor wrong = Tensor::Allocate(DataType::kFloat, {5});
  absl::Status mismatch = p.CopyToHost(*first, wrong);
  EXPECT_TRUE(absl::IsInvalidArgument(mismatch));
  EXPECT_EQ(mismatch.message(), "execution provider 'cuda': CopyToHost: source is float[4], destination float[5]");
  EXPECT_TRUE(fake->violations().empty());
}

TEST(CudaProviderTest, UploadsConstantInputsForKernelFactories) {
  auto created = CudaExecutionProvider::Create(Settings({}), Fake(std::make_shared<FakeDeviceRuntime>()));
  ASSERT_TRUE(created.ok()) << created.status();
  onnx::GraphProto proto;
  proto.add_input()->set_name("x");
  onnx::TensorProto* w = proto.add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_float_data(3.0f);
  w->add_float_data(-1.0f);
  std::unique_ptr<Graph> graph = *Graph::FromProto(proto, {{"", 17}}, "");
  Node node;
  node.name = "mul";
  node.op_type = "Mul";
  node.inputs = {"x", "w"};
  OpKernelInfo info(node, *graph, nullptr, created->get());

  absl::StatusOr<Tensor> device_w = UploadConstantInput(info, 1);
  ASSERT_TRUE(device_w.ok()) << device_w.status();
  EXPECT_NE(device_w->raw(), graph->FindInitializer("w")->raw());
  Tensor back = Tensor::Allocate(DataType::kFloat, {2});
  ASSERT_TRUE((*created)->CopyToHost(*device_w, back).ok());
  EXPECT_EQ(back.data<float>()[0], 3.0f);
  EXPECT_EQ(back.data<float>()[1], -1.0f);

  absl::StatusOr<Tensor> not_constant = UploadConstantInput(info, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(not_constant.status()));
  EXPECT_NE(not_constant.status().message().find("input 0 is not a constant initializer"), absl::string_view::npos);
  absl::StatusOr<Tensor> off_cuda = UploadConstantInput(OpKernelInfo(node, *graph, nullptr, nullptr), 1);
  EXPECT_NE(off_cuda.status().message().find("the node is not assigned to the cuda provider"), absl::string_view::npos)
      << off_cuda.status();
}

TEST(CudaProviderTest, DeclinesNodesItsKernelsCannotCreate) {
  CudaExecutionProvider::Dependencies deps = Fake(std::make_shared<FakeDeviceRuntime>());
  deps.register_kernels = [](KernelRegistry& registry) {
    registry.Register(KernelDefBuilder("Reshape").Build(),
                      [](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
                        return info.Error("not created in this test");
                      });
  };
  deps.node_supported = [](const Node& node, const Graph&) -> absl::Status {
    if (node.name == "dynamic") return absl::InvalidArgumentError("Reshape 'dynamic': shape must be a constant");
    return absl::OkStatus();
  };
  auto created = CudaExecutionProvider::Create(Settings({}), std::move(deps));
  ASSERT_TRUE(created.ok()) << created.status();
  onnx::GraphProto proto;
  proto.add_input()->set_name("x");
  proto.add_input()->set_name("s");
  std::unique_ptr<Graph> graph = *Graph::FromProto(proto, {{"", 17}}, "");
  for (const char* name : {"fixed", "dynamic"}) {
    auto n = std::make_unique<Node>();
    n->name = name;
    n->op_type = "Reshape";
    n->inputs = {"x", "s"};
    n->outputs = {std::string(name) + "_out"};
    graph->AddNode(std::move(n));
  }
  auto relu = std::make_unique<Node>();
  relu->name = "relu";
  relu->op_type = "Relu";
  relu->inputs = {"x"};
  relu->outputs = {"r"};
  graph->AddNode(std::move(relu));

  Capability cap = (*created)->GetCapability(*graph);
  EXPECT_EQ(cap.nodes, (std::vector<size_t>{0}));
  ASSERT_EQ(cap.declined.count(1), 1u);
  EXPECT_EQ(cap.declined[1], "Reshape 'dynamic': shape must be a constant");
  ASSERT_EQ(cap.declined.count(2), 1u);
  EXPECT_EQ(cap.declined[2], "no kernel for op Relu");
}

}  // namespace
}  // namespace onyx
