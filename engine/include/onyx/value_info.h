// ValueInfo: the declared type and shape of a graph input, output or
// intermediate value. Plain data; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "onyx/data_type.h"

namespace onyx {

// Shape and type of a graph input or output. dims use -1 for a dimension that
// is not fixed; dim_params holds its symbolic name ("batch") or "".
struct ValueInfo {
  enum class Kind { kTensor, kSequence, kOptional };
  std::string name;
  Kind kind = Kind::kTensor;
  DataType type = DataType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
};

}  // namespace onyx
