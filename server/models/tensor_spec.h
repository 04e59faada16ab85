// TensorSpec: the shape and type of one model input or output as clients see it.
// Plain data: thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onyx/data_type.h"

namespace onyx::server {

struct TensorSpec {
  std::string name;
  onyx::DataType type = onyx::DataType::kUndefined;
  // Full shape including the batch dimension; -1 marks a dimension the client
  // chooses (the batch dimension of a batched model, or a free dimension). Empty
  // for a scalar. `has_shape` false: the rank is unknown (outputs only).
  std::vector<int64_t> dims;
  bool has_shape = true;
};

}  // namespace onyx::server
