// Helpers for the ai.onnx.ml kernel tests: one-node models of the ml domain.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx::testing {

struct ValueSpec {
  std::string name;
  DataType type;
  std::vector<int64_t> dims;  // -1: symbolic
};

// A model of one ai.onnx.ml node (default opset 17 beside it).
inline ModelBuilder MlModel(const std::string& op, int64_t ml_opset, const std::vector<ValueSpec>& inputs,
                            const std::vector<ValueSpec>& outputs, std::vector<onnx::AttributeProto> attributes) {
  ModelBuilder m(17);
  m.Opset("ai.onnx.ml", ml_opset);
  std::vector<std::string> in_names, out_names;
  for (const ValueSpec& v : inputs) {
    m.Input(v.name, v.type, v.dims);
    in_names.push_back(v.name);
  }
  for (const ValueSpec& v : outputs) {
    m.Output(v.name, v.type, v.dims);
    out_names.push_back(v.name);
  }
  auto& node = m.Node(op, in_names, out_names, "ml");
  node.set_domain("ai.onnx.ml");
  for (auto& a : attributes) *node.add_attribute() = std::move(a);
  return m;
}

inline Tensor StringTensor(const std::vector<int64_t>& dims, const std::vector<std::string>& values) {
  Tensor t = Tensor::Allocate(DataType::kString, dims);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<std::string>()[i] = values[i];
  return t;
}

// A tensor attribute of `type` holding `values` (numbers or strings).
template <typename T>
onnx::AttributeProto TensorAttr(const std::string& name, onnx::TensorProto::DataType type,
                                const std::vector<T>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a.mutable_t();
  t->set_data_type(type);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (const T& v : values) {
    if constexpr (std::is_same_v<T, std::string>) t->add_string_data(v);
    else if (type == onnx::TensorProto::DOUBLE) t->add_double_data(static_cast<double>(v));
    else if (type == onnx::TensorProto::FLOAT) t->add_float_data(static_cast<float>(v));
    else if (type == onnx::TensorProto::INT64) t->add_int64_data(static_cast<int64_t>(v));
    else t->add_int32_data(static_cast<int32_t>(v));
  }
  return a;
}

inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

}  // namespace onyx::testing
