// Warm-up inputs of a model's bucket sessions: what each session runs
// WarmupSpec::runs times at load, so that no client request pays first-run
// costs (the first run learns the memory pattern, the second reserves its block).
//
//   ASSIGN_OR_RETURN(WarmupSamples samples, LoadWarmupSamples("bert", graph_inputs, dir));
//   onyx::Feeds feeds = WarmupFeeds(session->inputs(), spec, samples);
//
// Inputs are zeros, deterministic random values (floats in [0, 1), integers in
// [0, 16) so that index inputs such as embedding ids stay valid, bools 0/1,
// strings empty) — free dims 1 — or sample tensors from a directory: one ONNX
// TensorProto per graph input, named "<input name>.pb" or, failing that,
// "input_<i>.pb" (i: graph input order). A sample has the input's type and
// rank and equals every dim the model fixes; along the dims a session fixes
// (batch bucket, padded sizes) it is tiled or cut to the session's size
// (element j takes sample element j mod the sample's size); free dims take the
// sample's size.
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onyx/session.h"

namespace onyx::server {

struct WarmupSpec {
  enum class Inputs { kZeros, kRandom, kSamples };
  int64_t runs = 2;  // per session; 0: none
  Inputs inputs = Inputs::kZeros;
  std::string sample_dir;  // kSamples: the directory of the sample files
};

// Sample tensors by graph input name.
using WarmupSamples = std::map<std::string, onyx::Tensor>;

// Reads and checks one sample per graph input. INVALID_ARGUMENT naming the
// model, file and input (expected vs received type or shape) for a missing,
// unreadable or unfitting file.
absl::StatusOr<WarmupSamples> LoadWarmupSamples(const std::string& model_name,
                                                const std::vector<onyx::ValueInfo>& inputs,
                                                const std::string& sample_dir);

// Feeds for a session whose inputs are `session_inputs` (dims fixed by the
// session where it fixes them); `samples` is read only for kSamples.
onyx::Feeds WarmupFeeds(const std::vector<onyx::ValueInfo>& session_inputs, const WarmupSpec& warmup,
                        const WarmupSamples& samples);

}  // namespace onyx::server
