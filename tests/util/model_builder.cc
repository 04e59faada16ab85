#include "tests/util/model_builder.h"

#include <random>

#include "graph/tensor_proto.h"

namespace onyx::testing {
namespace {

void SetType(onnx::ValueInfoProto* vi, DataType type, const std::vector<int64_t>& dims) {
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(type));
  auto* shape = t->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) {
      shape->add_dim()->set_dim_value(dims[i]);
    } else {
      shape->add_dim()->set_dim_param("d" + std::to_string(i));
    }
  }
}

}  // namespace

ModelBuilder::ModelBuilder(int64_t opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("onyx-tests");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name("test_graph");
}

ModelBuilder& ModelBuilder::Opset(const std::string& domain, int64_t version) {
  for (auto& op : *model_.mutable_opset_import()) {
    if (op.domain() == domain) {
      op.set_version(version);
      return *this;
    }
  }
  auto* op = model_.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
  return *this;
}

ModelBuilder& ModelBuilder::Input(const std::string& name, DataType type, const std::vector<int64_t>& dims) {
  auto* vi = model_.mutable_graph()->add_input();
  vi->set_name(name);
  SetType(vi, type, dims);
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name, DataType type, const std::vector<int64_t>& dims) {
  auto* vi = model_.mutable_graph()->add_output();
  vi->set_name(name);
  SetType(vi, type, dims);
  return *this;
}

ModelBuilder& ModelBuilder::OutputUntyped(const std::string& name) {
  model_.mutable_graph()->add_output()->set_name(name);
  return *this;
}

ModelBuilder& ModelBuilder::Initializer(const std::string& name, const Tensor& value) {
  *model_.mutable_graph()->add_initializer() = TensorToProto(value, name);
  return *this;
}

onnx::NodeProto& ModelBuilder::Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

onnx::AttributeProto IntAttr(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto FloatAttr(const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

onnx::AttributeProto FloatsAttr(const std::string& name, const std::vector<float>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) a.add_floats(v);
  return a;
}

onnx::AttributeProto StringAttr(const std::string& name, const std::string& value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(value);
  return a;
}

Tensor FloatTensor(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  Tensor t = Tensor::Allocate(DataType::kFloat, dims);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.num_elements(); ++i) {
    t.mutable_data<float>()[i] = values[i];
  }
  return t;
}

Tensor Int64Tensor(const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  Tensor t = Tensor::Allocate(DataType::kInt64, dims);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.num_elements(); ++i) {
    t.mutable_data<int64_t>()[i] = values[i];
  }
  return t;
}

Tensor RandomFloatTensor(const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Tensor t = Tensor::Allocate(DataType::kFloat, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = dist(rng);
  return t;
}

}  // namespace onyx::testing
