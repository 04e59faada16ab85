// Helpers for the math and nn kernel tests: run a one-node model built with
// ModelBuilder and read typed outputs.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx::testing {

// intra_op_threads 0: the process's CPU quota.
inline absl::StatusOr<std::vector<Value>> RunModel(const ModelBuilder& m, const Feeds& feeds,
                                                   const std::vector<std::string>& outputs, int intra_op_threads = 0) {
  SessionOptions options;
  options.model_name = "op_test";
  options.intra_op_threads = intra_op_threads;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  if (!session.ok()) return session.status();
  return (*session)->Run(RunOptions(), feeds, outputs);
}

template <typename T>
std::vector<T> Values(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

template <typename T>
Tensor TypedTensor(DataType type, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  Tensor t = Tensor::Allocate(type, dims);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}

inline onnx::AttributeProto StringsAttr(const std::string& name, const std::vector<std::string>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRINGS);
  for (const auto& v : values) a.add_strings(v);
  return a;
}

}  // namespace onyx::testing
