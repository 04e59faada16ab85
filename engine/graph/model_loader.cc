#include "graph/model_loader.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <fstream>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "graph/graph_cleanup.h"
#include "graph/map_values.h"
#include "graph/model_limits.h"
#include "graph/shape_propagation.h"
#include "graph/tensor_proto.h"
#include "graph/unsupported_types.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

std::string ModelLabel(const LoadOptions& options) {
  return options.model_name.empty() ? std::string("model") : "model '" + options.model_name + "'";
}

absl::Status ApplyOverrides(onnx::ModelProto& model, const LoadOptions& options) {
  for (const auto& [name, dims] : options.input_shape_overrides) {
    onnx::ValueInfoProto* input = nullptr;
    for (auto& vi : *model.mutable_graph()->mutable_input()) {
      if (vi.name() == name) input = &vi;
    }
    if (input == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(ModelLabel(options), ": shape override names unknown input '", name, "'"));
    }
    if (!input->type().has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ModelLabel(options), ": input '", name, "' is not a tensor; its shape cannot be fixed"));
    }
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && shape->dim_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": shape override for input '", name,
                                                     "' has rank ", dims.size(), ", the model declares rank ",
                                                     shape->dim_size()));
    }
    if (shape->dim_size() == 0) {
      for (size_t i = 0; i < dims.size(); ++i) shape->add_dim();
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) continue;
      auto* d = shape->mutable_dim(static_cast<int>(i));
      if (d->has_dim_value() && d->dim_value() != dims[i]) {
        return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": shape override for input '", name,
                                                       "' sets dim ", i, " to ", dims[i], " but the model fixes it to ",
                                                       d->dim_value()));
      }
      d->set_dim_value(dims[i]);
    }
  }
  return absl::OkStatus();
}

// ONNX's shape inference dereferences malformed graphs unchecked (e.g. a
// Conv or ConvTranspose weight of the wrong rank) and can crash the process —
// or not, depending on what lies in memory where it reads. So it never runs
// in this process: a forked child infers the shapes and sends back only what
// inference adds (value_info, input and output types, for the graph and every
// subgraph), which is merged into the model here. A crash there becomes an
// error for this model only.

// What shape inference wrote into `graph`, copied out: value_info, inputs
// and outputs, and nodes (in order) with their subgraph attributes only. A
// copy rather than stripping in place, since freeing in the forked child
// would copy the pages it frees.
onnx::GraphProto ShapesOf(const onnx::GraphProto& graph) {
  onnx::GraphProto shapes;
  *shapes.mutable_value_info() = graph.value_info();
  *shapes.mutable_input() = graph.input();
  *shapes.mutable_output() = graph.output();
  for (const onnx::NodeProto& node : graph.node()) {
    onnx::NodeProto* kept = shapes.add_node();
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.type() != onnx::AttributeProto::GRAPH && attr.type() != onnx::AttributeProto::GRAPHS) continue;
      onnx::AttributeProto* sub = kept->add_attribute();
      sub->set_name(attr.name());
      sub->set_type(attr.type());
      if (attr.has_g()) *sub->mutable_g() = ShapesOf(attr.g());
      for (const onnx::GraphProto& g : attr.graphs()) *sub->add_graphs() = ShapesOf(g);
    }
  }
  return shapes;
}

// Copies the inferred shapes of `from` (ShapesOf an inferred copy of
// `to`) into `to`. False when the two graphs do not line up.
bool MergeShapes(const onnx::GraphProto& from, onnx::GraphProto& to) {
  if (from.node_size() != to.node_size() || from.input_size() != to.input_size() ||
      from.output_size() != to.output_size()) {
    return false;
  }
  *to.mutable_value_info() = from.value_info();
  *to.mutable_input() = from.input();
  *to.mutable_output() = from.output();
  for (int n = 0; n < to.node_size(); ++n) {
    for (onnx::AttributeProto& attr : *to.mutable_node(n)->mutable_attribute()) {
      if (attr.type() != onnx::AttributeProto::GRAPH && attr.type() != onnx::AttributeProto::GRAPHS) continue;
      const onnx::AttributeProto* match = nullptr;
      for (const onnx::AttributeProto& a : from.node(n).attribute()) {
        if (a.name() == attr.name()) match = &a;
      }
      if (match == nullptr || match->graphs_size() != attr.graphs_size() || match->has_g() != attr.has_g()) {
        return false;
      }
      if (attr.has_g() && !MergeShapes(match->g(), *attr.mutable_g())) return false;
      for (int k = 0; k < attr.graphs_size(); ++k) {
        if (!MergeShapes(match->graphs(k), *attr.mutable_graphs(k))) return false;
      }
    }
  }
  return true;
}

// Throws what ONNX's shape inference throws.
void InferShapesInProcess(onnx::ModelProto& model) {
  onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0,
                                        /*enable_data_propagation=*/true);
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), inference);
}

// The fallback when no child process can be made: in this process, as before.
absl::Status InferShapesUnisolated(onnx::ModelProto& model, const std::string& label) {
  try {
    InferShapesInProcess(model);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": shape inference failed: ", e.what()));
  }
  return absl::OkStatus();
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

absl::Status InferShapesIsolated(onnx::ModelProto& model, const std::string& label) {
  int fds[2];
  if (pipe(fds) != 0) return InferShapesUnisolated(model, label);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return InferShapesUnisolated(model, label);
  }
  if (pid == 0) {
    close(fds[0]);
    // A crash here ends the child by its signal, also under a sanitizer, whose
    // handler would report ONNX's fault (a report per contained crash) first.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) signal(sig, SIG_DFL);
    // Exit 0: the stripped inferred graph follows; 3: an exception's message.
    int code = 0;
    std::string reply;
    try {
      // The child's model is its own (copy-on-write): inferring in place
      // copies only the pages inference writes, never the weights.
      InferShapesInProcess(model);
      reply = ShapesOf(model.graph()).SerializeAsString();
    } catch (const std::exception& e) {
      code = 3;
      reply = e.what();
    } catch (...) {
      code = 3;
      reply = "unknown error";
    }
    _exit(WriteAll(fds[1], reply) ? code : 4);
  }
  close(fds[1]);
  std::string reply;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": shape inference failed: ", reply));
  }
  // A crash is a signal, or — under a sanitizer, whose handler reports the
  // fault and exits — any exit status but the child's own.
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFSIGNALED(status) ? absl::StrCat("signal ", WTERMSIG(status))
                                                : absl::StrCat("exit status ", WEXITSTATUS(status));
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": ONNX shape inference crashed on this model (", how,
                     "): the graph is malformed (check node input ranks and attributes)"));
  }
  onnx::GraphProto inferred;
  if (!inferred.ParseFromString(reply) || !MergeShapes(inferred, *model.mutable_graph())) {
    return absl::InternalError(
        absl::StrCat(label, ": the shapes inferred in the shape-inference process do not fit the model"));
  }
  return absl::OkStatus();
}

// Every external-data file of the graph and its subgraphs stays inside the
// model directory (tensor_proto.h ExternalDataPath), checked before the ONNX
// checker, which opens those files itself.
absl::Status CheckExternalDataPaths(const onnx::GraphProto& graph, const std::string& model_dir) {
  std::vector<const onnx::GraphProto*> pending = {&graph};
  while (!pending.empty()) {
    const onnx::GraphProto* g = pending.back();
    pending.pop_back();
    for (const onnx::TensorProto& init : g->initializer()) {
      if (init.data_location() == onnx::TensorProto::EXTERNAL)
        RETURN_IF_ERROR(ExternalDataPath(init, model_dir).status());
    }
    for (const onnx::NodeProto& node : g->node()) {
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.has_g()) pending.push_back(&attr.g());
        for (const onnx::GraphProto& body : attr.graphs()) pending.push_back(&body);
      }
    }
  }
  return absl::OkStatus();
}

bool HasExternalData(const onnx::GraphProto& graph) {
  for (const auto& init : graph.initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL) return true;
  }
  return false;
}

// onnx 1.12's checker refuses every IR version above its own (8), but models at
// opsets 19-23 carry IR 9-11 (ONNX 1.13-1.18), which add element types (float8,
// 4-bit) and fields that this protobuf does not know and reads as unknown. The
// graph is checked under IR 8's rules instead, as check_model would check it
// (its model-level checks, an IR version set and opsets imported, hold here).
void CheckNewerIrModel(const onnx::ModelProto& model, const std::string& model_dir) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(onnx::Version::IR_VERSION);
  std::unordered_map<std::string, int> opsets;
  for (const auto& op : model.opset_import()) opsets[op.domain()] = static_cast<int>(op.version());
  ctx.set_opset_imports(std::move(opsets));
  ctx.set_model_dir(model_dir);
  onnx::checker::LexicalScopeContext lex;
  onnx::checker::check_graph(model.graph(), ctx, lex);
  onnx::checker::check_model_local_functions(model, ctx, lex);
}

}  // namespace

absl::StatusOr<LoadedModel> LoadParsed(onnx::ModelProto& model, const LoadOptions& options);

constexpr char kUnparsableCauses[] =
    "truncated, not protobuf, or messages nested past protobuf's limit of 100, about 30 subgraph levels";

absl::StatusOr<LoadedModel> LoadModel(std::string_view bytes, const LoadOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": not a valid ONNX ModelProto (", bytes.size(),
                                                   " bytes could not be parsed: ", kUnparsableCauses, ")"));
  }
  return LoadParsed(model, options);
}

absl::StatusOr<LoadedModel> LoadModelFile(const LoadOptions& options) {
  std::ifstream in(options.model_path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open model file '", options.model_path, "'"));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) {
    return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": '", options.model_path,
                                                   "' is not a valid ONNX ModelProto (", kUnparsableCauses, ")"));
  }
  return LoadParsed(model, options);
}

absl::StatusOr<LoadedModel> LoadParsed(onnx::ModelProto& model, const LoadOptions& options) {
  if (!model.has_graph()) {
    return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": the model has no graph"));
  }
  if (absl::Status limits = CheckModelLimits(model.graph()); !limits.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": ", limits.message()));
  }
  RegisterNewerOpsetSchemas();
  LoadedModel loaded;
  loaded.ir_version = model.ir_version();
  loaded.producer_name = model.producer_name();
  for (const auto& op : model.opset_import()) {
    std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    loaded.opsets[domain] = op.version();
  }
  if (loaded.opsets.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": the model imports no opset"));
  }
  for (const auto& [domain, version] : loaded.opsets) {
    if (version < 1) {
      return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": opset import of domain '", domain,
                                                     "' has version ", version, "; versions start at 1"));
    }
  }
  auto onnx_opset = loaded.opsets.find("");
  if (onnx_opset != loaded.opsets.end() && onnx_opset->second > kMaxSupportedOpset) {
    return absl::UnimplementedError(absl::StrCat(ModelLabel(options), ": default-domain opset ", onnx_opset->second,
                                                 " is newer than the supported ", kMaxSupportedOpset));
  }
  auto ml_opset = loaded.opsets.find("ai.onnx.ml");
  if (ml_opset != loaded.opsets.end() && ml_opset->second > kMaxOnnxMlOpset) {
    return absl::UnimplementedError(absl::StrCat(ModelLabel(options), ": ai.onnx.ml opset ", ml_opset->second,
                                                 " is newer than the supported ", kMaxOnnxMlOpset));
  }
  if (absl::Status maps = RefuseMapValues(model.graph()); !maps.ok()) {
    return absl::UnimplementedError(absl::StrCat(ModelLabel(options), ": ", maps.message()));
  }
  RETURN_IF_ERROR(ApplyOverrides(model, options));
  {
    absl::Status sorted = SortNodes(*model.mutable_graph());
    if (!sorted.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), ": ", sorted.message()));
    }
  }
  // Before the checker, which would reject these types without naming the node.
  if (absl::Status s = CheckElementTypes(model.graph(), loaded.opsets); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(ModelLabel(options), ": ", s.message()));
  }

  if (absl::Status paths = CheckExternalDataPaths(model.graph(), options.model_dir); !paths.ok()) {
    return absl::Status(paths.code(), absl::StrCat(ModelLabel(options), ": ", paths.message()));
  }
  try {
    const bool external = HasExternalData(model.graph());
    const bool checkable_external = external && !options.model_path.empty() && options.input_shape_overrides.empty();
    if (model.ir_version() > onnx::Version::IR_VERSION) {
      if (!external || checkable_external) CheckNewerIrModel(model, options.model_dir);
    } else if (checkable_external) {
      onnx::checker::check_model(options.model_path);
    } else if (!external) {
      onnx::checker::check_model(model);
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(ModelLabel(options), " failed the ONNX checker: ", e.what()));
  }
  RETURN_IF_ERROR(InferShapesIsolated(model, ModelLabel(options)));
  PruneCounts pruned = PruneUnused(*model.mutable_graph());
  loaded.pruned_nodes = pruned.nodes;
  loaded.pruned_initializers = pruned.initializers;
  if (pruned.nodes > 0 || pruned.initializers > 0) {
    EngineLogger()->info("{}: dropped {} nodes and {} initializers that no graph output depends on",
                         ModelLabel(options), pruned.nodes, pruned.initializers);
  }
  ASSIGN_OR_RETURN(loaded.graph, Graph::TakeFromProto(model.mutable_graph(), loaded.opsets, options.model_dir));
  loaded.functions.assign(model.functions().begin(), model.functions().end());
  return loaded;
}

absl::StatusOr<int> ReinferShapes(Graph& graph, int64_t ir_version) {
  onnx::ModelProto model;
  model.set_ir_version(ir_version > 0 ? ir_version : 8);
  std::set<std::string> imported;
  for (const auto& [domain, version] : graph.opsets()) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
    imported.insert(domain);
  }
  // The optimizer's own operators (com.onyx) have no import in the model:
  // without one ONNX refuses the whole graph; with one it passes over the
  // nodes it has no schema for and infers the rest from their recorded types.
  if (imported.count("ai.onnx")) imported.insert("");
  if (imported.count("")) imported.insert("ai.onnx");
  for (const Node* n : graph.Nodes()) {
    if (imported.insert(n->domain).second) {
      auto* op = model.add_opset_import();
      op->set_domain(n->domain);
      op->set_version(1);
    }
  }
  // Weights travel as typed inputs: inference needs only the small
  // shape-like constants' values, and copying a model's weights on every
  // refinement round would cost time and peak memory.
  constexpr int64_t kShapeConstantBytes = 4096;
  graph.ToProto(model.mutable_graph(), kShapeConstantBytes);
  if (!InferShapesIsolated(model, "model").ok()) {
    return 0;  // best effort: kernels check shapes at run time
  }
  int changed = 0;
  auto record = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type()) return;
    const ValueInfo* known = graph.FindValueInfo(vi.name());
    if (known != nullptr && known->type != DataType::kUndefined) {
      ValueInfo inferred = ValueInfoFromTypeProto(vi.name(), vi.type());
      if (!RefinesShape(*known, inferred)) return;
      graph.SetValueInfo(vi.name(), std::move(inferred));
    } else {
      graph.SetValueInfo(vi.name(), ValueInfoFromTypeProto(vi.name(), vi.type()));
    }
    ++changed;
  };
  for (const auto& vi : model.graph().value_info()) record(vi);
  for (const auto& vi : model.graph().output()) record(vi);
  return changed;
}

}  // namespace onyx
