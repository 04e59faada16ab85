// Inputs of `onyx bench`: the concrete shape of every graph input, resolved
// from the command's flags, and seeded random values of each input's type.
//
//   ShapeFlags flags;                     // --batch 8 --dim seq=128
//   flags.batch = 8;
//   flags.dims["seq"] = 128;
//   ASSIGN_OR_RETURN(ModelInputs model, ReadModelInputs("model.onnx"));
//   ASSIGN_OR_RETURN(auto shapes, ResolveShapes(model.inputs, flags));
//   std::mt19937_64 rng(seed);
//   ASSIGN_OR_RETURN(Tensor t, RandomTensor(DataType::kInt64, shapes["ids"], model.index_bounds["ids"], rng));
//
// Free functions of their arguments only; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onyx/session.h"
#include "onyx/tensor.h"

namespace onyx::cli {

struct ShapeFlags {
  // --batch: the first dimension of every input whose first dimension is not
  // fixed by the model. `batch_given` says whether the flag was on the command.
  int64_t batch = 1;
  bool batch_given = false;
  // --dim NAME=VALUE: every input dimension named NAME (a dim_param).
  std::map<std::string, int64_t> dims;
  // --shape INPUT=D1,D2,...: the whole shape of one input; wins over the rest.
  std::map<std::string, std::vector<int64_t>> shapes;
};

// Concrete dims for every tensor input of `inputs` (optional-typed inputs are
// left out: the benchmark does not feed them). INVALID_ARGUMENT names the flag
// and value at fault: an unknown input or dim name, a shape of the wrong rank
// or contradicting a fixed dimension, --batch on a model without a free first
// dimension, --batch and --dim giving one dimension two values, or a dimension
// that no flag fixes (with the --dim or --shape that would). Sequence inputs
// are UNIMPLEMENTED.
absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveShapes(const std::vector<ValueInfo>& inputs,
                                                                          const ShapeFlags& flags);

// What the benchmark needs to know of a model's graph inputs before a session
// exists (so that the session can be created with every input shape fixed).
struct ModelInputs {
  // Graph inputs without an initializer, as the model declares them.
  std::vector<ValueInfo> inputs;
  // For the integer inputs that serve as indices, the exclusive upper bound
  // their values must stay below: the size of the gathered axis of each Gather
  // / GatherElements they reach (directly or through Cast, Reshape, Squeeze,
  // Unsqueeze, Flatten, Identity, Expand, Transpose), the smallest when there
  // are several. Only axes whose size the graph states (an initializer, a
  // Constant, a fixed declared shape) count; other inputs are absent.
  std::map<std::string, int64_t> index_bounds;
};

// Reads the ONNX model at `model_path`. Errors name the file when it cannot
// be read or parsed.
absl::StatusOr<ModelInputs> ReadModelInputs(const std::string& model_path);

// Exclusive upper bound of integer inputs without a bound from the graph.
inline constexpr int64_t kDefaultIndexBound = 8;

// The values RandomTensor draws for `type`: uniform in [low, high). Floating
// types [-1, 1); bool [0, 2); uint8 [0, 256); int8 [0, 128); other integers
// [0, index_bound) (kDefaultIndexBound when index_bound <= 0), clipped to the
// type's range. UNIMPLEMENTED for string and complex types.
struct ValueRange {
  bool integral = false;
  int64_t low = 0;
  int64_t high = 0;
};
absl::StatusOr<ValueRange> RandomValueRange(DataType type, int64_t index_bound);

// A tensor of `type` and `dims` filled from `rng` over RandomValueRange.
absl::StatusOr<Tensor> RandomTensor(DataType type, const std::vector<int64_t>& dims, int64_t index_bound,
                                    std::mt19937_64& rng);

}  // namespace onyx::cli
