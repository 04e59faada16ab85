#include "providers/cuda/graph_capture.h"

#include <cstring>
#include <memory>
#include <vector>

#include "graph/op_domains.h"
#include "gtest/gtest.h"
#include "providers/cuda/fake_device_runtime.h"

namespace onyx {
namespace {

// A partitioned graph, built node by node as the partitioner leaves it.
class GraphBuilder {
 public:
  // The graph's inputs are "x" (shapes are set with Shape()).
  GraphBuilder() : graph_(*Graph::FromProto(InputX(), {{"", 17}}, "")) {}
  GraphBuilder& Node(const std::string& op, const std::string& name, const std::string& provider,
                     std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto n = std::make_unique<onyx::Node>();
    n->op_type = op;
    n->name = name;
    n->provider = provider;
    if (op.rfind("Memcpy", 0) == 0) n->domain = kOnyxDomain;
    n->inputs = std::move(inputs);
    n->outputs = std::move(outputs);
    for (const auto& o : n->outputs) Shape(o, {2, 3});
    graph_->AddNode(std::move(n));
    return *this;
  }
  GraphBuilder& Shape(const std::string& value, std::vector<int64_t> dims, std::vector<std::string> params = {}) {
    ValueInfo info;
    info.type = DataType::kFloat;
    info.has_shape = true;
    info.dim_params = params.empty() ? std::vector<std::string>(dims.size()) : params;
    info.dims = std::move(dims);
    graph_->SetValueInfo(value, info);
    return *this;
  }
  Graph& graph() { return *graph_; }

 private:
  static onnx::GraphProto InputX() {
    onnx::GraphProto proto;
    proto.add_input()->set_name("x");
    return proto;
  }

  std::unique_ptr<Graph> graph_;
};

// x -> up -> Relu -> down -> Softmax (cpu) -> up2 -> Add -> down2 -> y
GraphBuilder Interleaved() {
  GraphBuilder b;
  b.Shape("x", {2, 3})
      .Node("MemcpyFromHost", "up", "cuda", {"x"}, {"x_dev"})
      .Node("Relu", "relu", "cuda", {"x_dev"}, {"r"})
      .Node("MemcpyToHost", "down", "cuda", {"r"}, {"r_host"})
      .Node("Softmax", "softmax", "cpu", {"r_host"}, {"s"})
      .Node("MemcpyFromHost", "up2", "cuda", {"s"}, {"s_dev"})
      .Node("Add", "add", "cuda", {"s_dev", "x_dev"}, {"y_dev"})
      .Node("MemcpyToHost", "down2", "cuda", {"y_dev"}, {"y"});
  return b;
}

TEST(GraphCaptureTest, RefusesAGraphWithoutCudaNodes) {
  GraphBuilder b;
  b.Shape("x", {2, 3}).Node("Relu", "relu", "cpu", {"x"}, {"y"});
  absl::StatusOr<CapturePlan> plan = PlanGraphCapture(b.graph());
  EXPECT_TRUE(absl::IsFailedPrecondition(plan.status()));
  EXPECT_EQ(plan.status().message(), "CUDA graph capture refused: no node runs on provider 'cuda'");
}

TEST(GraphCaptureTest, RefusesControlFlowNamingTheNode) {
  GraphBuilder b;
  b.Shape("x", {2, 3})
      .Node("MemcpyFromHost", "up", "cuda", {"x"}, {"x_dev"})
      .Node("Relu", "relu", "cuda", {"x_dev"}, {"r"})
      .Node("Loop", "loop", "cpu", {"", "", "x"}, {"l"});
  EXPECT_EQ(PlanGraphCapture(b.graph()).status().message(),
            "CUDA graph capture refused: Loop 'loop' is control flow: the host decides what it runs");
}

TEST(GraphCaptureTest, RefusesAHostNodeBetweenCudaNodes) {
  GraphBuilder b = Interleaved();
  EXPECT_EQ(PlanGraphCapture(b.graph()).status().message(),
            "CUDA graph capture refused: Softmax 'softmax' runs on provider 'cpu' between cuda nodes Relu 'relu' "
            "and Add 'add'");
}

TEST(GraphCaptureTest, AcceptsHostNodesBeforeAndAfterTheLane) {
  GraphBuilder b;
  b.Shape("x", {2, 3})
      .Node("Cast", "pre", "cpu", {"x"}, {"c"})
      .Node("MemcpyFromHost", "up", "cuda", {"c"}, {"c_dev"})
      .Node("Relu", "relu", "cuda", {"c_dev"}, {"r"})
      .Node("Sigmoid", "sig", "cuda", {"r"}, {"s"})
      .Node("MemcpyToHost", "down", "cuda", {"s"}, {"s_host"})
      .Node("Softmax", "post", "cpu", {"s_host"}, {"y"});
  absl::StatusOr<CapturePlan> plan = PlanGraphCapture(b.graph());
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Node indices in insertion order: pre 0, up 1, relu 2, sig 3, down 4, post 5.
  EXPECT_EQ(plan->uploads, (std::vector<size_t>{1}));
  EXPECT_EQ(plan->body, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(plan->downloads, (std::vector<size_t>{4}));
}

TEST(GraphCaptureTest, RefusesDynamicShapes) {
  GraphBuilder b;
  b.Node("MemcpyFromHost", "up", "cuda", {"x"}, {"x_dev"})
      .Node("Relu", "relu", "cuda", {"x_dev"}, {"r"})
      .Shape("x", {-1, 3}, {"batch", ""});
  EXPECT_EQ(PlanGraphCapture(b.graph()).status().message(),
            "CUDA graph capture refused: value 'x' (input of MemcpyFromHost 'up') has a dynamic shape [batch,3]");
}

TEST(GraphCaptureTest, RefusesValuesWithoutShape) {
  GraphBuilder b;
  b.Shape("x", {2, 3}).Node("Relu", "relu", "cuda", {"x"}, {"r"}).Node("Relu", "relu2", "cuda", {"r"}, {"q"});
  ValueInfo unknown;
  unknown.type = DataType::kFloat;
  b.graph().SetValueInfo("r", unknown);
  EXPECT_EQ(PlanGraphCapture(b.graph()).status().message(),
            "CUDA graph capture refused: value 'r' (output of Relu 'relu') has no inferred shape");
}

// The lane's body in the controller tests: copies device buffer a into b.
struct Lane {
  Lane() : fake(std::make_shared<FakeDeviceRuntime>()) {
    stream = *fake->StreamCreate();
    a = static_cast<char*>(*fake->DeviceMalloc(4));
    b = static_cast<char*>(*fake->DeviceMalloc(4));
  }
  absl::Status Body() {
    ++enqueued;
    return fake->MemcpyDeviceToDeviceAsync(b, a, 4, stream);
  }
  std::shared_ptr<FakeDeviceRuntime> fake;
  StreamHandle stream;
  char* a;
  char* b;
  int enqueued = 0;
};

TEST(CaptureControllerTest, WarmsUpThenCapturesThenReplays) {
  Lane lane;
  CaptureController capture(lane.fake, {.warmup_runs = 2});
  auto body = [&] { return lane.Body(); };
  for (int run = 0; run < 2; ++run) ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  EXPECT_EQ(lane.enqueued, 2);
  EXPECT_EQ(lane.fake->calls("BeginCapture"), 0);
  EXPECT_EQ(capture.state(), CaptureController::State::kWarmingUp);

  ASSERT_TRUE(lane.fake->StreamSynchronize(lane.stream).ok());
  std::memcpy(lane.b, "----", 4);
  std::memcpy(lane.a, "run3", 4);
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  EXPECT_EQ(lane.enqueued, 3);  // recorded once
  EXPECT_EQ(lane.fake->calls("BeginCapture"), 1);
  EXPECT_EQ(lane.fake->calls("GraphInstantiate"), 1);
  EXPECT_EQ(lane.fake->calls("GraphLaunch"), 1);
  ASSERT_TRUE(lane.fake->StreamSynchronize(lane.stream).ok());
  EXPECT_EQ(std::memcmp(lane.b, "run3", 4), 0);  // the capture run's work was done by the launch

  std::memcpy(lane.a, "run4", 4);
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  ASSERT_TRUE(lane.fake->StreamSynchronize(lane.stream).ok());
  EXPECT_EQ(std::memcmp(lane.b, "run4", 4), 0);  // a replay reads the recorded addresses afresh
  EXPECT_EQ(lane.enqueued, 3);
  EXPECT_EQ(capture.state(), CaptureController::State::kReplaying);
  EXPECT_EQ(capture.replays(), 2);
}

TEST(CaptureControllerTest, FailedCaptureRunsEagerlyAndStaysEager) {
  Lane lane;
  CaptureController capture(lane.fake, {.warmup_runs = 1});
  std::vector<void*> scratch;
  // A body that allocates: fine eagerly, barred while capturing.
  auto body = [&]() -> absl::Status {
    absl::StatusOr<void*> p = lane.fake->DeviceMalloc(16);
    if (!p.ok()) return p.status();
    scratch.push_back(*p);
    return lane.Body();
  };
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  ASSERT_TRUE(lane.fake->StreamSynchronize(lane.stream).ok());
  std::memcpy(lane.b, "----", 4);
  std::memcpy(lane.a, "eagr", 4);
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  ASSERT_TRUE(lane.fake->StreamSynchronize(lane.stream).ok());
  EXPECT_EQ(std::memcmp(lane.b, "eagr", 4), 0);  // this run's work was done, eagerly
  EXPECT_EQ(capture.state(), CaptureController::State::kDisabled);
  EXPECT_EQ(capture.disabled_reason(), "cudaMalloc: operation not permitted when stream is capturing");
  EXPECT_EQ(lane.fake->calls("EndCapture"), 1);
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  EXPECT_EQ(lane.fake->calls("BeginCapture"), 1);
  EXPECT_EQ(lane.enqueued, 3);  // warm-up, eager retry, eager run; the failed capture never got to the copy
}

TEST(CaptureControllerTest, ResetDropsTheGraphAndWarmsUpAgain) {
  Lane lane;
  CaptureController capture(lane.fake, {.warmup_runs = 0});
  auto body = [&] { return lane.Body(); };
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());
  EXPECT_EQ(capture.state(), CaptureController::State::kReplaying);
  capture.Reset();
  EXPECT_EQ(lane.fake->calls("GraphExecDestroy"), 1);
  EXPECT_EQ(lane.fake->calls("GraphDestroy"), 1);
  EXPECT_EQ(capture.state(), CaptureController::State::kWarmingUp);
  ASSERT_TRUE(capture.Run(lane.stream, body).ok());  // warmup_runs 0: captures again
  EXPECT_EQ(lane.fake->calls("BeginCapture"), 2);
}

}  // namespace
}  // namespace onyx
