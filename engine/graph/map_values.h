// Map-valued graphs: the engine's values are tensors, sequences of tensors and
// optionals (onyx/tensor.h), so the ai.onnx.ml operators that produce or
// consume maps (ZipMap, DictVectorizer, CastMap) and map-typed graph inputs or
// outputs cannot be served. RefuseMapValues finds them before shape inference,
// whose own error for them names neither node nor reason.
#pragma once

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace onyx {

// UNIMPLEMENTED naming the first map operator node of `graph` (subgraphs
// included), else the first map-typed graph input/output, and why; OK when
// there is none.
absl::Status RefuseMapValues(const onnx::GraphProto& graph);

}  // namespace onyx
