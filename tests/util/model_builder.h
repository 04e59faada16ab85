// Builds small ONNX models in memory for tests.
//
//   ModelBuilder m(/*opset=*/13);
//   m.Input("x", DataType::kFloat, {-1, 4}).Output("y", DataType::kFloat, {-1, 4});
//   m.Node("Relu", {"x"}, {"y"});
//   ASSERT_OK_AND_ASSIGN(auto session, InferenceSession::CreateFromBytes(m.Serialize(), {}));
//
// A dim of -1 becomes a symbolic dim ("d0", "d1", ...).
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "onyx/tensor.h"

namespace onyx::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13);
  ModelBuilder& Opset(const std::string& domain, int64_t version);
  ModelBuilder& Input(const std::string& name, DataType type, const std::vector<int64_t>& dims);
  ModelBuilder& Output(const std::string& name, DataType type, const std::vector<int64_t>& dims);
  ModelBuilder& OutputUntyped(const std::string& name);
  ModelBuilder& Initializer(const std::string& name, const Tensor& value);
  onnx::NodeProto& Node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");
  onnx::ModelProto& proto() { return model_; }
  std::string Serialize() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

onnx::AttributeProto IntAttr(const std::string& name, int64_t value);
onnx::AttributeProto FloatAttr(const std::string& name, float value);
onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values);
onnx::AttributeProto FloatsAttr(const std::string& name, const std::vector<float>& values);
onnx::AttributeProto StringAttr(const std::string& name, const std::string& value);

// A float tensor with the given dims and values.
Tensor FloatTensor(const std::vector<int64_t>& dims, const std::vector<float>& values);
Tensor Int64Tensor(const std::vector<int64_t>& dims, const std::vector<int64_t>& values);
// Deterministic pseudo-random floats in [-1, 1).
Tensor RandomFloatTensor(const std::vector<int64_t>& dims, uint32_t seed);

}  // namespace onyx::testing
