#include "tests/conformance/case_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "onyx/session.h"
#include "onyx/value_io.h"

namespace onyx::conformance {
namespace fs = std::filesystem;
namespace {

// First line of a status message, prefixed with its code: "UNIMPLEMENTED: no kernel ...".
std::string FirstLine(const absl::Status& status) {
  absl::string_view message = status.message();
  message = message.substr(0, message.find('\n'));
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", message);
}

// test_data_set_N directories of a case, in order of N.
std::vector<fs::path> DataSets(const fs::path& case_dir) {
  std::vector<std::pair<int, fs::path>> sets;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(case_dir, ec)) {
    const std::string name = entry.path().filename().string();
    int n = 0;
    if (entry.is_directory() && absl::StartsWith(name, "test_data_set_") &&
        absl::SimpleAtoi(name.substr(14), &n)) {
      sets.emplace_back(n, entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> paths;
  for (auto& [n, path] : sets) paths.push_back(path);
  return paths;
}

// Number of files prefix_0.pb, prefix_1.pb, ... present in `dir`.
size_t CountFiles(const fs::path& dir, const std::string& prefix) {
  size_t n = 0;
  while (fs::exists(dir / absl::StrCat(prefix, "_", n, ".pb"))) ++n;
  return n;
}

absl::Status RunDataSet(const InferenceSession& session, const fs::path& dir, const CaseOptions& options) {
  const std::string set_name = dir.filename().string();
  const auto& inputs = session.inputs();
  const auto& outputs = session.outputs();
  const size_t input_files = CountFiles(dir, "input");
  const size_t output_files = CountFiles(dir, "output");
  if (input_files != inputs.size() || output_files != outputs.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        set_name, ": has ", input_files, " inputs and ", output_files, " outputs, the session has ",
        inputs.size(), " and ", outputs.size()));
  }
  Feeds feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string path = (dir / absl::StrCat("input_", i, ".pb")).string();
    absl::StatusOr<Value> value = ReadValueFile(path, inputs[i].kind);
    if (!value.ok()) return absl::Status(value.status().code(), absl::StrCat("read: ", FirstLine(value.status())));
    feeds.emplace_back(inputs[i].name, *std::move(value));
  }
  absl::StatusOr<std::vector<Value>> results = session.Run(RunOptions(), feeds, {});
  if (!results.ok()) return absl::Status(results.status().code(), absl::StrCat("run: ", FirstLine(results.status())));
  if (results->size() != outputs.size()) {
    return absl::InternalError(absl::StrCat("run: returned ", results->size(), " outputs, expected ", outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (dir / absl::StrCat("output_", i, ".pb")).string();
    absl::StatusOr<Value> expected = ReadValueFile(path, outputs[i].kind);
    if (!expected.ok()) {
      return absl::Status(expected.status().code(), absl::StrCat("read: ", FirstLine(expected.status())));
    }
    std::string label = absl::StrCat("output ", i, " '", outputs[i].name, "'");
    absl::Status match = CompareValues(*expected, (*results)[i], options.tolerance, label);
    if (!match.ok()) return match;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListCases(const std::string& root) {
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read '", root, "': ", ec.message()));
  std::vector<std::string> names;
  for (const auto& entry : it) {
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status RunCase(const std::string& case_dir, const CaseOptions& options) {
  SessionOptions session_options;
  session_options.intra_op_threads = options.intra_op_threads;
  session_options.model_name = fs::path(case_dir).filename().string();
  auto session = InferenceSession::Create((fs::path(case_dir) / "model.onnx").string(), session_options);
  if (!session.ok()) {
    return absl::Status(session.status().code(), absl::StrCat("create: ", FirstLine(session.status())));
  }
  const std::vector<fs::path> sets = DataSets(case_dir);
  if (sets.empty()) return absl::FailedPreconditionError("no test_data_set_N directory");
  for (const fs::path& set : sets) {
    absl::Status status = RunDataSet(**session, set, options);
    if (!status.ok()) {
      if (sets.size() == 1) return status;
      return absl::Status(status.code(), absl::StrCat(set.filename().string(), ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

std::string CaseOpType(const std::string& case_dir) {
  std::ifstream in(fs::path(case_dir) / "model.onnx", std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in) || model.graph().node_size() == 0) return "?";
  const onnx::GraphProto& graph = model.graph();
  // The backend-test generator names the internal values of an expanded function
  // "<Op>_<case>_expanded_function_<value>".
  const std::string name = fs::path(case_dir).filename().string();
  if (absl::EndsWith(name, "_expanded")) {
    const std::string marker = absl::StrCat("_", name.substr(0, name.size() - 9), "_expanded_function_");
    for (const auto& node : graph.node()) {
      for (const auto& value : node.output()) {
        const size_t pos = value.find(marker);
        if (pos != std::string::npos && pos > 0) return absl::StrCat(value.substr(0, pos), " (expanded)");
      }
    }
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant") return node.op_type();
  }
  return graph.node(0).op_type();
}

bool IsTrainingOnlyCase(absl::string_view name) {
  for (absl::string_view prefix : {"test_adagrad", "test_adam", "test_momentum", "test_nesterov_momentum",
                                  "test_gradient", "test_training_dropout"}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return absl::StartsWith(name, "test_batchnorm_") && absl::StrContains(name, "_training_mode");
}

bool IsRandomOutputCase(absl::string_view name) {
  // Drawn with numpy's generator: another generator's draw is as correct and
  // matches only by chance. Statistics are checked in tensor_ops_test.cc.
  return absl::StartsWith(name, "test_bernoulli");
}

}  // namespace onyx::conformance
