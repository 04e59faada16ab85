#include "tests/conformance/case_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace onyx::conformance {
namespace {
namespace fs = std::filesystem;

TEST(CaseRunnerTest, TrainingOnlyCasesByName) {
  for (const char* name : {"test_adagrad", "test_adam_multiple", "test_momentum", "test_nesterov_momentum",
                           "test_gradient_of_add", "test_training_dropout_zero_ratio_mask",
                           "test_batchnorm_epsilon_training_mode"}) {
    EXPECT_TRUE(IsTrainingOnlyCase(name)) << name;
  }
  for (const char* name : {"test_dropout_default", "test_dropout_default_mask", "test_batchnorm_epsilon",
                           "test_add"}) {
    EXPECT_FALSE(IsTrainingOnlyCase(name)) << name;
  }
}

TEST(CaseRunnerTest, BernoulliCasesAreRandomOutputCases) {
  for (const char* name : {"test_bernoulli", "test_bernoulli_double_expanded", "test_bernoulli_seed"}) {
    EXPECT_TRUE(IsRandomOutputCase(name)) << name;
  }
  for (const char* name : {"test_dropout_default", "test_randomuniformlike", "test_add"}) {
    EXPECT_FALSE(IsRandomOutputCase(name)) << name;
  }
}

// Writes a model whose graph has the given (op_type, output) nodes.
std::string WriteModel(const std::string& case_name, std::vector<std::pair<std::string, std::string>> nodes) {
  const fs::path dir = fs::path(::testing::TempDir()) / "cases" / case_name;
  fs::create_directories(dir);
  onnx::ModelProto model;
  for (const auto& [op, output] : nodes) {
    auto* node = model.mutable_graph()->add_node();
    node->set_op_type(op);
    node->add_output(output);
  }
  std::ofstream out(dir / "model.onnx", std::ios::binary);
  model.SerializeToOstream(&out);
  return dir.string();
}

TEST(CaseRunnerTest, OpTypeSkipsConstantsAndNamesExpandedFunctions) {
  EXPECT_EQ(CaseOpType(WriteModel("test_pad", {{"Constant", "pads"}, {"Pad", "y"}})), "Pad");
  EXPECT_EQ(CaseOpType(WriteModel("test_softmax_axis_0_expanded",
                                  {{"Constant", "Softmax_test_softmax_axis_0_expanded_function_axes"},
                                   {"ReduceMax", "Softmax_test_softmax_axis_0_expanded_function_max"},
                                   {"Sub", "y"}})),
            "Softmax (expanded)");
  EXPECT_EQ(CaseOpType((fs::path(::testing::TempDir()) / "no_such_case").string()), "?");
}

TEST(CaseRunnerTest, ListCasesFindsDirectoriesWithModels) {
  const std::string b = WriteModel("test_b", {{"Abs", "y"}});
  WriteModel("test_a", {{"Abs", "y"}});
  fs::create_directories(fs::path(b).parent_path() / "not_a_case");
  auto names = ListCases(fs::path(b).parent_path().string());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->front(), "test_a");
  EXPECT_EQ(std::count(names->begin(), names->end(), "not_a_case"), 0);
  EXPECT_EQ(ListCases("/nonexistent/dir").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace onyx::conformance
