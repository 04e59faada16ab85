#include "session/model_writer.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "graph/op_domains.h"

namespace onyx {

absl::Status WriteOptimizedModel(const LoadedModel& model, const std::string& path) {
  onnx::ModelProto proto;
  proto.set_ir_version(model.ir_version);
  proto.set_producer_name("onyx");
  bool has_onyx_domain = false;
  for (const auto& [domain, version] : model.opsets) {
    auto* op = proto.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
    has_onyx_domain |= (domain == kOnyxDomain);
  }
  if (!has_onyx_domain) {
    auto* op = proto.add_opset_import();
    op->set_domain(kOnyxDomain);
    op->set_version(1);
  }
  model.graph->ToProto(proto.mutable_graph());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out)) {
    return absl::InternalError(absl::StrCat("cannot write optimized model to '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace onyx
