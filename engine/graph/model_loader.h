// Loading an ONNX model into the IR: parse, apply fixed input dims, sort the
// nodes, check with onnx::checker, run ONNX shape inference, drop what no
// output needs, build the Graph.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/schemas/newer_opsets.h"

namespace onyx {

struct LoadedModel {
  std::unique_ptr<Graph> graph;
  std::map<std::string, int64_t> opsets;
  int64_t ir_version = 0;
  std::string producer_name;
  std::vector<onnx::FunctionProto> functions;  // model-local functions
  int64_t pruned_nodes = 0;                    // nodes no graph output depends on, dropped at load
  int64_t pruned_initializers = 0;             // initializers nothing read, dropped at load
};

struct LoadOptions {
  std::string model_name;  // for error messages
  std::string model_dir;   // external data files are resolved here
  std::string model_path;  // set when loading from a file
  std::map<std::string, std::vector<int64_t>> input_shape_overrides;
};

// Errors (INVALID_ARGUMENT unless said otherwise) name the model and what is wrong:
// unparsable bytes, a cycle (naming its nodes), checker failures, an unsupported opset (UNIMPLEMENTED),
// overrides naming unknown inputs or contradicting fixed dims, and graphs on
// which ONNX's shape inference would crash (it is tried in a child process first).
absl::StatusOr<LoadedModel> LoadModel(std::string_view bytes, const LoadOptions& options);
// Parses options.model_path straight from the file (no in-memory copy of it).
absl::StatusOr<LoadedModel> LoadModelFile(const LoadOptions& options);

// Re-runs ONNX shape inference over the IR (after rewrites added values or
// made shapes constant) and records types for values that have none yet, and
// shapes that say more than the recorded ones and agree with them (a Reshape
// whose shape input folded to a constant). Returns how many values changed.
absl::StatusOr<int> ReinferShapes(Graph& graph, int64_t ir_version);

// Highest default-domain opset the engine knows.
constexpr int64_t kMaxSupportedOpset = kMaxOnnxOpset;

}  // namespace onyx
