#include "cli/bench_inputs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"

namespace onyx::cli {
namespace {

// "[batch,3,224,224]": fixed dims as numbers, free ones by name or "?".
std::string DeclaredShape(const ValueInfo& v) {
  if (!v.has_shape) return "unknown shape";
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    parts.push_back(v.dims[i] >= 0 ? std::to_string(v.dims[i]) : (v.dim_params[i].empty() ? "?" : v.dim_params[i]));
  }
  return "[" + absl::StrJoin(parts, ",") + "]";
}

std::string ShapeFlag(const std::string& input, const std::vector<int64_t>& dims) {
  return absl::StrCat("--shape ", input, "=", absl::StrJoin(dims, ","));
}

absl::StatusOr<std::vector<int64_t>> CheckGivenShape(const ValueInfo& v, const std::vector<int64_t>& given) {
  if (!v.has_shape) return given;
  if (given.size() != v.dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat(ShapeFlag(v.name, given), ": input '", v.name, "' has rank ",
                                                   v.dims.size(), " ", DeclaredShape(v)));
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (v.dims[i] >= 0 && v.dims[i] != given[i]) {
      return absl::InvalidArgumentError(absl::StrCat(ShapeFlag(v.name, given), ": dimension ", i, " of input '", v.name,
                                                     "' is fixed to ", v.dims[i], " ", DeclaredShape(v)));
    }
  }
  return given;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveShapes(const std::vector<ValueInfo>& inputs,
                                                                          const ShapeFlags& flags) {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::set<std::string> dim_names;
  int batch_applied = 0;
  for (const ValueInfo& v : inputs) {
    for (const std::string& name : v.dim_params) {
      if (!name.empty()) dim_names.insert(name);
    }
    if (v.kind == ValueInfo::Kind::kOptional) continue;
    if (v.kind == ValueInfo::Kind::kSequence) {
      return absl::UnimplementedError(
          absl::StrCat("input '", v.name, "' is a sequence; onyx bench feeds tensors only"));
    }
    auto given = flags.shapes.find(v.name);
    if (given != flags.shapes.end()) {
      auto shape = CheckGivenShape(v, given->second);
      if (!shape.ok()) return shape.status();
      shapes[v.name] = *shape;
      continue;
    }
    if (!v.has_shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", v.name, "' declares no shape; give one with --shape ", v.name, "=D1,D2,..."));
    }
    std::vector<int64_t> dims = v.dims;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] >= 0) continue;
      const std::string& name = v.dim_params[i];
      auto named = name.empty() ? flags.dims.end() : flags.dims.find(name);
      int64_t value = named != flags.dims.end() ? named->second : -1;
      if (i == 0) {
        if (flags.batch_given && value >= 0 && value != flags.batch) {
          return absl::InvalidArgumentError(absl::StrCat("--batch ", flags.batch, " and --dim ", name, "=", value,
                                                         " give dimension 0 of input '", v.name, "' different values"));
        }
        if (value < 0) value = flags.batch;
        ++batch_applied;
      }
      if (value < 0) {
        std::string fix = name.empty() ? "" : absl::StrCat("--dim ", name, "=N or ");
        return absl::InvalidArgumentError(absl::StrCat("dimension ", i, " of input '", v.name, "' ", DeclaredShape(v),
                                                       " is not fixed; set it with ", fix, "--shape ", v.name,
                                                       "=D1,D2,..."));
      }
      dims[i] = value;
    }
    shapes[v.name] = std::move(dims);
  }
  for (const auto& [input, dims] : flags.shapes) {
    bool known = false;
    std::vector<std::string> names;
    for (const ValueInfo& v : inputs) {
      known |= v.name == input;
      names.push_back("'" + v.name + "'");
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(ShapeFlag(input, dims), ": the model has no input '", input,
                                                     "' (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  for (const auto& [name, value] : flags.dims) {
    if (!dim_names.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim ", name, "=", value, ": no input dimension is named '", name,
                       "' (named dimensions: ", dim_names.empty() ? "none" : absl::StrJoin(dim_names, ", "), ")"));
    }
  }
  if (flags.batch_given && batch_applied == 0) {
    // A model with a fixed batch still accepts the batch it was made for.
    for (const ValueInfo& v : inputs) {
      if (!shapes.count(v.name) || flags.shapes.count(v.name) || v.dims.empty()) continue;
      if (v.dims[0] != flags.batch) {
        return absl::InvalidArgumentError(absl::StrCat("--batch ", flags.batch,
                                                       ": no input has a free first dimension ", "and input '", v.name,
                                                       "' is ", DeclaredShape(v)));
      }
    }
  }
  return shapes;
}

namespace {

bool IsIntegerElemType(int32_t t) {
  using onnx::TensorProto;
  return t == TensorProto::INT16 || t == TensorProto::INT32 || t == TensorProto::INT64 || t == TensorProto::UINT16 ||
         t == TensorProto::UINT32 || t == TensorProto::UINT64;
}

// Ops whose first input's values reach their output unchanged (as a set).
bool PassesValuesThrough(const std::string& op) {
  static const char* const kOps[] = {"Cast",    "Reshape",  "Squeeze", "Unsqueeze",
                                     "Flatten", "Identity", "Expand",  "Transpose"};
  for (const char* k : kOps) {
    if (op == k) return true;
  }
  return false;
}

int64_t IntAttribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

// Shapes the graph states outright: initializers, Constant outputs, and
// inputs / value_info whose every dimension is fixed.
std::map<std::string, std::vector<int64_t>> StatedShapes(const onnx::GraphProto& graph) {
  std::map<std::string, std::vector<int64_t>> shapes;
  auto add_value_info = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      dims.push_back(d.dim_value());
    }
    shapes[v.name()] = dims;
  };
  for (const auto& v : graph.input()) add_value_info(v);
  for (const auto& v : graph.value_info()) add_value_info(v);
  for (const auto& t : graph.initializer()) shapes[t.name()] = {t.dims().begin(), t.dims().end()};
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) shapes[node.output(0)] = {a.t().dims().begin(), a.t().dims().end()};
    }
  }
  return shapes;
}

ValueInfo FromProto(const onnx::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  const onnx::TypeProto* type = &v.type();
  if (type->has_sequence_type()) {
    info.kind = ValueInfo::Kind::kSequence;
    type = &type->sequence_type().elem_type();
  } else if (type->has_optional_type()) {
    info.kind = ValueInfo::Kind::kOptional;
    type = &type->optional_type().elem_type();
  }
  if (!type->has_tensor_type()) return info;
  info.type = static_cast<DataType>(type->tensor_type().elem_type());
  if (info.kind == ValueInfo::Kind::kTensor && type->tensor_type().has_shape()) {
    info.has_shape = true;
    for (const auto& d : type->tensor_type().shape().dim()) {
      info.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return info;
}

}  // namespace

absl::StatusOr<ModelInputs> ReadModelInputs(const std::string& model_path) {
  // Parsed before the session exists and freed before it is created: the
  // session parses the same file, so this never raises the reported peak RSS.
  ModelInputs result;
  std::set<std::string> integer_inputs;
  onnx::GraphProto graph;
  {
    std::ifstream in(model_path, std::ios::binary);
    if (!in)
      return absl::NotFoundError(absl::StrCat("cannot open model file ", model_path, ": ", std::strerror(errno)));
    onnx::ModelProto model;
    if (!model.ParseFromIstream(&in)) {
      return absl::InvalidArgumentError(absl::StrCat("cannot parse ", model_path, " as an ONNX model"));
    }
    std::set<std::string> initialized;
    for (const auto& t : model.graph().initializer()) initialized.insert(t.name());
    for (const auto& v : model.graph().input()) {
      if (initialized.count(v.name())) continue;
      result.inputs.push_back(FromProto(v));
      if (v.type().has_tensor_type() && IsIntegerElemType(v.type().tensor_type().elem_type())) {
        integer_inputs.insert(v.name());
      }
    }
    if (integer_inputs.empty()) return result;
    graph = std::move(*model.mutable_graph());
  }
  const auto stated = StatedShapes(graph);
  std::multimap<std::string, std::pair<const onnx::NodeProto*, int>> consumers;
  for (const auto& node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i) consumers.emplace(node.input(i), std::make_pair(&node, i));
  }
  for (const std::string& input : integer_inputs) {
    int64_t bound = -1;
    std::set<std::string> seen = {input};
    std::deque<std::string> pending = {input};
    while (!pending.empty()) {
      std::string value = pending.front();
      pending.pop_front();
      auto [begin, end] = consumers.equal_range(value);
      for (auto it = begin; it != end; ++it) {
        const onnx::NodeProto& node = *it->second.first;
        const int slot = it->second.second;
        const std::string& op = node.op_type();
        if (slot == 0 && PassesValuesThrough(op) && node.output_size() > 0) {
          if (seen.insert(node.output(0)).second) pending.push_back(node.output(0));
        } else if (op == "EmbedLayerNormalization") {
          // com.microsoft: ids index the word (input 2), segment (4) and
          // position (3) tables; the mask (7) holds 0 and 1.
          static const std::map<int, int> kTableOf = {{0, 2}, {1, 4}, {8, 3}};
          int64_t rows = -1;
          if (slot == 7) {
            rows = 2;
          } else if (auto table = kTableOf.find(slot); table != kTableOf.end() && table->second < node.input_size()) {
            auto data = stated.find(node.input(table->second));
            if (data != stated.end() && !data->second.empty()) rows = data->second[0];
          }
          if (rows > 0) bound = bound < 0 ? rows : std::min(bound, rows);
        } else if (slot == 1 && (op == "Gather" || op == "GatherElements")) {
          auto data = stated.find(node.input(0));
          if (data == stated.end() || data->second.empty()) continue;
          const int64_t rank = data->second.size();
          int64_t axis = IntAttribute(node, "axis", 0);
          if (axis < 0) axis += rank;
          if (axis < 0 || axis >= rank || data->second[axis] <= 0) continue;
          bound = bound < 0 ? data->second[axis] : std::min(bound, data->second[axis]);
        }
      }
    }
    if (bound > 0) result.index_bounds[input] = bound;
  }
  return result;
}

absl::StatusOr<ValueRange> RandomValueRange(DataType type, int64_t index_bound) {
  const int64_t bound = index_bound > 0 ? index_bound : kDefaultIndexBound;
  auto indices = [bound](int64_t type_max) { return ValueRange{true, 0, std::min(bound, type_max + 1)}; };
  switch (type) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16: return ValueRange{false, -1, 1};
    case DataType::kBool: return ValueRange{true, 0, 2};
    case DataType::kUint8: return ValueRange{true, 0, 256};
    case DataType::kInt8: return ValueRange{true, 0, 128};
    case DataType::kInt16: return indices(std::numeric_limits<int16_t>::max());
    case DataType::kUint16: return indices(std::numeric_limits<uint16_t>::max());
    case DataType::kInt32: return indices(std::numeric_limits<int32_t>::max());
    case DataType::kUint32: return indices(std::numeric_limits<uint32_t>::max());
    case DataType::kInt64:
    case DataType::kUint64: return ValueRange{true, 0, bound};
    default:
      return absl::UnimplementedError(
          absl::StrCat("onyx bench cannot make random values of type ", DataTypeName(type)));
  }
}

absl::StatusOr<Tensor> RandomTensor(DataType type, const std::vector<int64_t>& dims, int64_t index_bound,
                                    std::mt19937_64& rng) {
  auto range = RandomValueRange(type, index_bound);
  if (!range.ok()) return range.status();
  Tensor t = Tensor::Allocate(type, dims);
  const int64_t n = t.num_elements();
  std::uniform_real_distribution<float> real(static_cast<float>(range->low), static_cast<float>(range->high));
  std::uniform_int_distribution<int64_t> integer(range->low, range->high - 1);
  auto fill = [&](auto* p, auto draw) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<std::remove_reference_t<decltype(*p)>>(draw());
  };
  auto draw_integer = [&] { return integer(rng); };
  switch (type) {
    case DataType::kFloat: fill(t.mutable_data<float>(), [&] { return real(rng); }); break;
    case DataType::kDouble: fill(t.mutable_data<double>(), [&] { return real(rng); }); break;
    case DataType::kFloat16: fill(t.mutable_data<uint16_t>(), [&] { return FloatToHalf(real(rng)); }); break;
    case DataType::kBFloat16: fill(t.mutable_data<uint16_t>(), [&] { return FloatToBFloat16(real(rng)); }); break;
    case DataType::kBool: fill(t.mutable_data<bool>(), draw_integer); break;
    case DataType::kUint8: fill(t.mutable_data<uint8_t>(), draw_integer); break;
    case DataType::kInt8: fill(t.mutable_data<int8_t>(), draw_integer); break;
    case DataType::kInt16: fill(t.mutable_data<int16_t>(), draw_integer); break;
    case DataType::kUint16: fill(t.mutable_data<uint16_t>(), draw_integer); break;
    case DataType::kInt32: fill(t.mutable_data<int32_t>(), draw_integer); break;
    case DataType::kUint32: fill(t.mutable_data<uint32_t>(), draw_integer); break;
    case DataType::kInt64: fill(t.mutable_data<int64_t>(), draw_integer); break;
    case DataType::kUint64: fill(t.mutable_data<uint64_t>(), draw_integer); break;
    default: break;  // RandomValueRange refused it
  }
  return t;
}

}  // namespace onyx::cli
