// One ONNX backend node-test case: a directory holding model.onnx and
// test_data_set_N/{input_i.pb,output_i.pb}.
//
//   ASSIGN_OR_RETURN(std::vector<std::string> names, ListCases("build/onnx_node_tests"));
//   absl::Status result = RunCase("build/onnx_node_tests/" + names[0], CaseOptions());
//   // result.ok(): every output of every data set matched; otherwise
//   // result.message() is the one-line failure reason.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/conformance/value_compare.h"

namespace onyx::conformance {

struct CaseOptions {
  Tolerance tolerance;
  // SessionOptions::intra_op_threads for the case's session.
  int intra_op_threads = 1;
};

// Names of the subdirectories of `root` that hold a model.onnx, sorted.
// NOT_FOUND when `root` cannot be read.
absl::StatusOr<std::vector<std::string>> ListCases(const std::string& root);

// Creates a session from `case_dir`/model.onnx and runs every data set: inputs
// fed in graph-input order, every graph output compared with output_i.pb. OK
// when all match; otherwise an error whose message is a one-line reason
// ("create: UNIMPLEMENTED: ...", "run: ...", "output 0 'y': element ...").
// Runs the engine in this process: call it in a child process (isolation.h).
absl::Status RunCase(const std::string& case_dir, const CaseOptions& options);

// The operator a case tests, read from model.onnx without the engine: for an
// "_expanded" case, the op whose function body the graph holds, suffixed
// " (expanded)"; otherwise the first node that is not a Constant (or the first
// node). "?" when the model cannot be read.
std::string CaseOpType(const std::string& case_dir);

// True for the training-only cases, which are not counted: Adagrad, Adam,
// Momentum, Gradient, and training-mode Dropout / BatchNormalization.
bool IsTrainingOnlyCase(absl::string_view name);

// True for cases whose expected outputs are one random draw (Bernoulli): they
// cannot be compared value by value, so the runner skips them.
bool IsRandomOutputCase(absl::string_view name);

}  // namespace onyx::conformance
