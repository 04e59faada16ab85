// If, Loop and Scan run hand-built subgraphs through a session; the expected
// values are worked out by hand in the comments.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::TypedTensor;
using testing::Values;

onnx::ValueInfoProto Info(const std::string& name, onnx::TensorProto::DataType type, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* tensor = v.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return v;
}

onnx::NodeProto* AddNode(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

void AddConstant(onnx::GraphProto& g, const std::string& name, onnx::TensorProto::DataType type,
                 const std::vector<int64_t>& dims, const std::vector<double>& values) {
  onnx::AttributeProto* a = AddNode(g, "Constant", {}, {name})->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double v : values) {
    if (type == onnx::TensorProto::FLOAT) t->add_float_data(static_cast<float>(v));
    if (type == onnx::TensorProto::INT64) t->add_int64_data(static_cast<int64_t>(v));
  }
}

onnx::AttributeProto GraphAttr(const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = graph;
  return a;
}

Tensor BoolScalar(bool value) { return TypedTensor<bool>(DataType::kBool, {}, {value}); }

// y = cond ? x + 1 : x * 2, both branches reading x from the outer graph.
TEST(ControlFlowKernelsTest, IfRunsTheChosenBranchWithOuterScopeValues) {
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  AddConstant(then_branch, "one", onnx::TensorProto::FLOAT, {}, {1});
  AddNode(then_branch, "Add", {"x", "one"}, {"t"});
  *then_branch.add_output() = Info("t", onnx::TensorProto::FLOAT, {3});
  else_branch.set_name("else");
  AddConstant(else_branch, "two", onnx::TensorProto::FLOAT, {}, {2});
  AddNode(else_branch, "Mul", {"x", "two"}, {"e"});
  *else_branch.add_output() = Info("e", onnx::TensorProto::FLOAT, {3});

  ModelBuilder m(13);
  m.Input("cond", DataType::kBool, {}).Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  auto& node = m.Node("If", {"cond"}, {"y"});
  *node.add_attribute() = GraphAttr("then_branch", then_branch);
  *node.add_attribute() = GraphAttr("else_branch", else_branch);
  const Tensor x = FloatTensor({3}, {1.5f, -2, 4});
  auto yes = RunModel(m, {{"cond", Value(BoolScalar(true))}, {"x", Value(x)}}, {"y"});
  auto no = RunModel(m, {{"cond", Value(BoolScalar(false))}, {"x", Value(x)}}, {"y"});
  ASSERT_TRUE(yes.ok()) << yes.status();
  ASSERT_TRUE(no.ok()) << no.status();
  EXPECT_EQ(Values<float>((*yes)[0]), std::vector<float>({2.5f, -1, 5}));
  EXPECT_EQ(Values<float>((*no)[0]), std::vector<float>({3, -4, 8}));
}

// Body: v_out = v_in * 2 + i, cond_out = i < limit (outer scope), and v_out
// as a scan output. From v = [1, 2]: i = 0 -> [2, 4], 1 -> [5, 9],
// 2 -> [12, 20], 3 -> [27, 43].
onnx::GraphProto LoopBody() {
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = Info("i", onnx::TensorProto::INT64, {});
  *body.add_input() = Info("cond_in", onnx::TensorProto::BOOL, {});
  *body.add_input() = Info("v_in", onnx::TensorProto::FLOAT, {2});
  AddConstant(body, "two", onnx::TensorProto::FLOAT, {}, {2});
  AddNode(body, "Mul", {"v_in", "two"}, {"doubled"});
  AddNode(body, "Cast", {"i"}, {"i_float"})->add_attribute()->CopyFrom(IntAttr("to", onnx::TensorProto::FLOAT));
  AddNode(body, "Add", {"doubled", "i_float"}, {"v_out"});
  AddNode(body, "Less", {"i", "limit"}, {"cond_out"});
  AddNode(body, "Identity", {"v_out"}, {"scan"});
  *body.add_output() = Info("cond_out", onnx::TensorProto::BOOL, {});
  *body.add_output() = Info("v_out", onnx::TensorProto::FLOAT, {2});
  *body.add_output() = Info("scan", onnx::TensorProto::FLOAT, {2});
  return body;
}

absl::StatusOr<std::vector<Value>> RunLoop(const std::string& trip_count_input, const Feeds& feeds) {
  ModelBuilder m(13);
  m.Input("v", DataType::kFloat, {2}).Input("limit", DataType::kInt64, {});
  if (!trip_count_input.empty()) m.Input(trip_count_input, DataType::kInt64, {});
  m.Output("v_final", DataType::kFloat, {2}).Output("scans", DataType::kFloat, {-1, 2});
  m.Initializer("cond", BoolScalar(true));
  *m.Node("Loop", {trip_count_input, "cond", "v"}, {"v_final", "scans"}).add_attribute() =
      GraphAttr("body", LoopBody());
  return RunModel(m, feeds, {"v_final", "scans"});
}

TEST(ControlFlowKernelsTest, LoopCarriesStateAndStacksScanOutputs) {
  // Trip count 4; the condition (i < 10) stays true.
  auto out = RunLoop("m", {{"v", Value(FloatTensor({2}, {1, 2}))},
                           {"limit", Value(TypedTensor<int64_t>(DataType::kInt64, {}, {10}))},
                           {"m", Value(TypedTensor<int64_t>(DataType::kInt64, {}, {4}))}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({27, 43}));
  EXPECT_EQ((*out)[1].tensor().dims(), Dims({4, 2}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({2, 4, 5, 9, 12, 20, 27, 43}));
}

TEST(ControlFlowKernelsTest, LoopStopsWhenTheBodyConditionTurnsFalse) {
  // No trip count; cond_out = i < 2 is false after iteration 2: three runs.
  auto out = RunLoop(
      "", {{"v", Value(FloatTensor({2}, {1, 2}))}, {"limit", Value(TypedTensor<int64_t>(DataType::kInt64, {}, {2}))}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({12, 20}));
  EXPECT_EQ((*out)[1].tensor().dims(), Dims({3, 2}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({2, 4, 5, 9, 12, 20}));
}

TEST(ControlFlowKernelsTest, LoopWithZeroTripsReturnsTheInitialState) {
  auto out = RunLoop("m", {{"v", Value(FloatTensor({2}, {1, 2}))},
                           {"limit", Value(TypedTensor<int64_t>(DataType::kInt64, {}, {10}))},
                           {"m", Value(TypedTensor<int64_t>(DataType::kInt64, {}, {0}))}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, 2}));
  EXPECT_EQ((*out)[1].tensor().dims(), Dims({0, 2}));
}

// Scan (opset 11) of a running sum: s_out = s_in + x_t, scan output
// s_out * 10 - x_t. Over rows [1, 2], [3, 4], [5, 6] from s = [0, 0]:
// forward s = [1, 2], [4, 6], [9, 12]; reversed [5, 6], [8, 10], [9, 12].
absl::StatusOr<std::vector<Value>> RunScan(int64_t direction) {
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = Info("s_in", onnx::TensorProto::FLOAT, {2});
  *body.add_input() = Info("x_t", onnx::TensorProto::FLOAT, {2});
  AddConstant(body, "ten", onnx::TensorProto::FLOAT, {}, {10});
  AddNode(body, "Add", {"s_in", "x_t"}, {"s_out"});
  AddNode(body, "Mul", {"s_out", "ten"}, {"scaled"});
  AddNode(body, "Sub", {"scaled", "x_t"}, {"y_t"});
  *body.add_output() = Info("s_out", onnx::TensorProto::FLOAT, {2});
  *body.add_output() = Info("y_t", onnx::TensorProto::FLOAT, {2});
  ModelBuilder m(11);
  m.Input("s", DataType::kFloat, {2}).Input("x", DataType::kFloat, {3, 2});
  m.Output("s_final", DataType::kFloat, {2}).Output("ys", DataType::kFloat, {3, 2});
  auto& node = m.Node("Scan", {"s", "x"}, {"s_final", "ys"});
  *node.add_attribute() = GraphAttr("body", body);
  *node.add_attribute() = IntAttr("num_scan_inputs", 1);
  *node.add_attribute() = IntsAttr("scan_input_directions", {direction});
  return RunModel(m, {{"s", Value(FloatTensor({2}, {0, 0}))}, {"x", Value(FloatTensor({3, 2}, {1, 2, 3, 4, 5, 6}))}},
                  {"s_final", "ys"});
}

TEST(ControlFlowKernelsTest, ScanCarriesStateForward) {
  auto out = RunScan(0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({9, 12}));
  // s * 10 - x per row: [10 - 1, 20 - 2], [40 - 3, 60 - 4], [90 - 5, 120 - 6].
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({9, 18, 37, 56, 85, 114}));
}

TEST(ControlFlowKernelsTest, ScanReadsAReversedInputFromTheEnd) {
  auto out = RunScan(1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({9, 12}));
  // Iterations see rows 2, 1, 0: [50 - 5, 60 - 6], [80 - 3, 100 - 4], [90 - 1, 120 - 2].
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({45, 54, 77, 96, 89, 118}));
}

TEST(ControlFlowKernelsTest, IfBranchOutputCountMismatchIsRefused) {
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  AddNode(then_branch, "Identity", {"x"}, {"t"});
  *then_branch.add_output() = Info("t", onnx::TensorProto::FLOAT, {3});
  else_branch.set_name("else");  // no output
  ModelBuilder m(13);
  m.Input("cond", DataType::kBool, {}).Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  auto& node = m.Node("If", {"cond"}, {"y"});
  *node.add_attribute() = GraphAttr("then_branch", then_branch);
  *node.add_attribute() = GraphAttr("else_branch", else_branch);
  auto out = RunModel(m, {{"cond", Value(BoolScalar(false))}, {"x", Value(FloatTensor({3}, {1, 2, 3}))}}, {"y"});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace onyx
