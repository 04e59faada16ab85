// Writes a (rewritten) graph back as an ONNX model file that onnx::checker
// accepts. Fused operators live in the com.onyx domain, imported at version 1.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "graph/model_loader.h"

namespace onyx {

absl::Status WriteOptimizedModel(const LoadedModel& model, const std::string& path);

}  // namespace onyx
