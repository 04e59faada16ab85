#include "graph/map_values.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

bool HoldsMap(const onnx::TypeProto& type) {
  if (type.has_map_type()) return true;
  if (type.has_sequence_type()) return HoldsMap(type.sequence_type().elem_type());
  if (type.has_optional_type()) return HoldsMap(type.optional_type().elem_type());
  return false;
}

constexpr char kWhy[] = "onyx holds tensors, sequences of tensors and optionals, not maps";

}  // namespace

absl::Status RefuseMapValues(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    const std::string& op = node.op_type();
    if (node.domain() == "ai.onnx.ml" && (op == "ZipMap" || op == "DictVectorizer" || op == "CastMap")) {
      const std::string label = node.name().empty() ? op : absl::StrCat(op, " '", node.name(), "'");
      std::string hint;
      if (op == "ZipMap") {
        hint =
            "; export the classifier without it (skl2onnx: options={'zipmap': False}) to serve its "
            "probabilities as a tensor";
      }
      return absl::UnimplementedError(absl::StrCat("node ", label, " (ai.onnx.ml.", op, ") ",
                                                   op == "ZipMap" ? "outputs a sequence of maps" : "takes a map", ": ",
                                                   kWhy, hint));
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) {
        absl::Status sub = RefuseMapValues(attr.g());
        if (!sub.ok()) return sub;
      }
    }
  }
  for (const auto* values : {&graph.input(), &graph.output()}) {
    for (const auto& v : *values) {
      if (HoldsMap(v.type())) {
        return absl::UnimplementedError(absl::StrCat("graph ", values == &graph.input() ? "input" : "output", " '",
                                                     v.name(), "' is map-typed: ", kWhy));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace onyx
