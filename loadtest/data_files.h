// Input data from files: NumPy .npy, ONNX TensorProto .pb (the ONNX backend
// test format, decoded from its wire format so onyx-load needs no onnx
// library), directories of them, and perf_analyzer's JSON input-data format.
//
//   ASSIGN_OR_RETURN(TensorValue x, ReadNpy("dir/input.npy"));
//   ASSIGN_OR_RETURN(DataSet set, ReadPerfAnalyzerJson("data.json", specs));
//
// Every error names the file and what in it is wrong (INVALID_ARGUMENT), or
// NOT_FOUND for a missing file. Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loadtest/tensor.h"

namespace onyx::load {

absl::StatusOr<TensorValue> ReadNpy(const std::string& path);
absl::StatusOr<TensorValue> ReadTensorProto(const std::string& path);

// DIR/NAME.npy or DIR/NAME.pb, named `name`; nullopt when neither exists.
absl::StatusOr<std::optional<TensorValue>> ReadTensorFromDir(const std::string& dir, const std::string& name);

// What the JSON reader needs to know of each tensor: its datatype and the
// shape to use when an entry gives only the values.
struct TensorSpec {
  std::string name, datatype;
  std::vector<int64_t> shape;  // fully known (batch and --shape applied)
};

// One request's tensors, by name.
using TensorSet = std::map<std::string, TensorValue>;

struct DataSet {
  std::vector<TensorSet> inputs;    // one per request variant
  std::vector<TensorSet> expected;  // validation_data, empty or one per variant
};

// {"data": [{"INPUT": [values] | {"content": [values], "shape": [dims]} |
// {"b64": "..."}}, ...], "validation_data": [{"OUTPUT": ...}, ...]}: every
// entry must give every input; nested arrays are flattened.
absl::StatusOr<DataSet> ReadPerfAnalyzerJson(const std::string& path, const std::vector<TensorSpec>& inputs,
                                             const std::vector<TensorSpec>& outputs);

absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace onyx::load
