#include "loadtest/request_builder.h"

#include <unistd.h>

#include <sys/stat.h>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "loadtest/schedule.h"
#include "loadtest/status_macros.h"

namespace onyx::load {
namespace {

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

// The shape to send for a tensor: --shape if given for it (model-specific
// first), else the metadata shape with a variable first dimension set to
// --batch. Outputs may keep other variable dimensions (-1).
absl::StatusOr<std::vector<int64_t>> ResolveShape(const std::string& model, const std::string& tensor,
                                                  const google::protobuf::RepeatedField<int64_t>& declared,
                                                  const Options& o, bool is_input) {
  std::vector<int64_t> dims(declared.begin(), declared.end());
  const ShapeOverride* chosen = nullptr;
  for (const ShapeOverride& s : o.shapes) {
    if (s.input != tensor || !is_input) continue;
    if (s.model == model || (s.model.empty() && (chosen == nullptr || chosen->model.empty()))) chosen = &s;
  }
  if (chosen != nullptr) {
    bool fits = chosen->dims.size() == dims.size();
    for (size_t i = 0; fits && i < dims.size(); ++i) fits = dims[i] < 0 || dims[i] == chosen->dims[i];
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat("--shape ", tensor, ": model '", model, "' declares ", Dims(dims),
                                                     ", got ", Dims(chosen->dims)));
    }
    return chosen->dims;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) continue;
    if (i == 0) {
      dims[i] = o.batch;
    } else if (is_input) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", model, "' input '", tensor, "' has shape ", Dims(dims), ": dimension ", i,
                       " is variable; give the whole shape with --shape ", tensor, "=D1,D2,..."));
    }
  }
  return dims;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string SourceFor(const std::string& model, const Options& o) {
  std::string source = "random", generic;
  bool specific = false;
  for (const DataSource& d : o.data) {
    if (d.model == model) {
      source = d.source;
      specific = true;
    } else if (d.model.empty()) {
      generic = d.source;
    }
  }
  return specific ? source : generic.empty() ? source : generic;
}

absl::StatusOr<std::vector<TensorSet>> InputsFromDir(const std::string& dir, const std::vector<TensorSpec>& inputs,
                                                     const std::vector<OutputSpec>& outputs, bool validate,
                                                     std::vector<TensorSet>* expected) {
  TensorSet set, want;
  for (const TensorSpec& in : inputs) {
    ASSIGN_OR_RETURN(std::optional<TensorValue> t, ReadTensorFromDir(dir, in.name));
    if (!t)
      return absl::NotFoundError(absl::StrCat("--input-data ", dir, ": no ", in.name, ".npy or ", in.name, ".pb"));
    set.emplace(in.name, std::move(*t));
  }
  for (const OutputSpec& out : outputs) {
    if (!validate) break;
    ASSIGN_OR_RETURN(std::optional<TensorValue> t, ReadTensorFromDir(dir, out.name));
    if (!t) {
      return absl::NotFoundError(absl::StrCat("--validate: no expected output ", dir, "/", out.name, ".npy or .pb"));
    }
    want.emplace(out.name, std::move(*t));
  }
  expected->push_back(std::move(want));
  return std::vector<TensorSet>{std::move(set)};
}

}  // namespace

absl::StatusOr<ModelWork> BuildModelWork(const inference::ModelMetadataResponse& md, const ModelSpec& spec,
                                         const Options& o, int index) {
  ModelWork work;
  work.spec = spec;
  work.method =
      o.streaming ? "/inference.GRPCInferenceService/ModelStreamInfer" : "/inference.GRPCInferenceService/ModelInfer";
  bool batch_used = false;
  for (const auto& in : md.inputs()) {
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(spec.name, in.name(), in.shape(), o, true));
    batch_used = batch_used || (in.shape_size() > 0 && in.shape(0) < 0);
    work.inputs.push_back({in.name(), in.datatype(), std::move(shape)});
  }
  if (o.batch > 1 && !batch_used) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch ", o.batch, ": model '", spec.name, "' has no input with a variable first dimension"));
  }
  for (const auto& out : md.outputs()) {
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ResolveShape(spec.name, out.name(), out.shape(), o, false));
    OutputSpec s{out.name(), out.datatype(), shape, -1};
    bool known = DatatypeSize(out.datatype()) > 0;
    for (int64_t d : shape) known = known && d >= 0;
    if (known) s.bytes = ElementCount(shape) * DatatypeSize(out.datatype());
    work.outputs.push_back(std::move(s));
  }

  // The tensors of each variant.
  work.data_source = SourceFor(spec.name, o);
  std::vector<TensorSet> sets, expected;
  if (work.data_source == "random" || work.data_source == "zeros") {
    std::mt19937_64 rng(MixSeed(o.seed, 7000 + index));
    TensorSet set;
    for (const TensorSpec& in : work.inputs) {
      ASSIGN_OR_RETURN(TensorValue t, MakeTensor(in.name, in.datatype, in.shape,
                                                 work.data_source == "zeros" ? Fill::kZeros : Fill::kRandom, &rng));
      set.emplace(in.name, std::move(t));
    }
    sets.push_back(std::move(set));
    if (o.validate) {
      return absl::InvalidArgumentError(absl::StrCat("--validate: model '", spec.name,
                                                     "' has generated inputs; expected outputs come with "
                                                     "--input-data DIR or a JSON file's validation_data"));
    }
  } else if (IsDirectory(work.data_source)) {
    ASSIGN_OR_RETURN(sets, InputsFromDir(work.data_source, work.inputs, work.outputs, o.validate, &expected));
  } else if (absl::EndsWith(work.data_source, ".json")) {
    std::vector<TensorSpec> outputs;
    for (const OutputSpec& out : work.outputs) outputs.push_back({out.name, out.datatype, out.shape});
    ASSIGN_OR_RETURN(DataSet data, ReadPerfAnalyzerJson(work.data_source, work.inputs, outputs));
    sets = std::move(data.inputs);
    expected = std::move(data.expected);
    if (o.validate && expected.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--validate: ", work.data_source, " has no \"validation_data\" for model '", spec.name, "'"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input-data: expected random, zeros, a directory or a .json file, got '", work.data_source, "'"));
  }
  // File data must agree with the model on datatypes.
  for (const TensorSet& set : sets) {
    for (const TensorSpec& in : work.inputs) {
      const TensorValue& t = set.at(in.name);
      if (t.datatype != in.datatype) {
        return absl::InvalidArgumentError(absl::StrCat("--input-data ", work.data_source, ": input '", in.name,
                                                       "' of model '", spec.name, "' is ", in.datatype, ", got ",
                                                       t.datatype));
      }
    }
  }
  if (!sets.empty()) {
    for (TensorSpec& in : work.inputs) in.shape = sets[0].at(in.name).shape;
  }

  // Shared memory: every variant's inputs back to back, then one slot per
  // output of known size (outputs stay in the reply under --validate).
  std::vector<std::vector<size_t>> offsets(sets.size());
  size_t total = 0;
  if (o.shm_system) {
    for (size_t v = 0; v < sets.size(); ++v) {
      for (const TensorSpec& in : work.inputs) {
        offsets[v].push_back(total);
        total += (sets[v].at(in.name).raw.size() + 63) / 64 * 64;
      }
    }
    std::vector<size_t> output_offsets;
    size_t outputs_at = total;
    for (const OutputSpec& out : work.outputs) {
      if (out.bytes >= 0 && !o.validate) total += (static_cast<size_t>(out.bytes) + 63) / 64 * 64;
    }
    work.shm_name = absl::StrCat("onyx_load_", getpid(), "_", index);
    ASSIGN_OR_RETURN(work.shm, ShmRegion::Create("/" + work.shm_name, total));
    for (size_t v = 0; v < sets.size(); ++v) {
      for (size_t i = 0; i < work.inputs.size(); ++i) {
        const std::string& raw = sets[v].at(work.inputs[i].name).raw;
        std::memcpy(work.shm->data() + offsets[v][i], raw.data(), raw.size());
      }
    }
    offsets.push_back({outputs_at});
  }

  for (size_t v = 0; v < sets.size(); ++v) {
    inference::ModelInferRequest r;
    r.set_model_name(spec.name);
    if (!spec.version.empty()) r.set_model_version(spec.version);
    for (size_t i = 0; i < work.inputs.size(); ++i) {
      const TensorValue& t = sets[v].at(work.inputs[i].name);
      auto* in = r.add_inputs();
      in->set_name(t.name);
      in->set_datatype(t.datatype);
      for (int64_t d : t.shape) in->add_shape(d);
      if (o.shm_system) {
        auto& params = *in->mutable_parameters();
        params["shared_memory_region"].set_string_param(work.shm_name);
        params["shared_memory_byte_size"].set_int64_param(static_cast<int64_t>(t.raw.size()));
        params["shared_memory_offset"].set_int64_param(static_cast<int64_t>(offsets[v][i]));
      } else if (o.typed_encoding) {
        ASSIGN_OR_RETURN(*in->mutable_contents(), TypedContents(t));
      } else {
        r.add_raw_input_contents(t.raw);
      }
    }
    if (o.shm_system && !o.validate) {
      size_t at = offsets.back()[0];
      for (const OutputSpec& out : work.outputs) {
        if (out.bytes < 0) continue;
        auto* req = r.add_outputs();
        req->set_name(out.name);
        auto& params = *req->mutable_parameters();
        params["shared_memory_region"].set_string_param(work.shm_name);
        params["shared_memory_byte_size"].set_int64_param(out.bytes);
        params["shared_memory_offset"].set_int64_param(static_cast<int64_t>(at));
        at += (static_cast<size_t>(out.bytes) + 63) / 64 * 64;
      }
    }
    RequestVariant variant;
    variant.bytes = r.SerializeAsString();
    if (v < expected.size()) variant.expected = std::move(expected[v]);
    work.variants.push_back(std::move(variant));
  }
  return work;
}

ModelWork EmptyCallWork() {
  ModelWork work;
  work.spec.name = "(ServerLive)";
  work.method = "/inference.GRPCInferenceService/ServerLive";
  work.variants.push_back({inference::ServerLiveRequest().SerializeAsString(), {}});
  work.data_source = "none";
  return work;
}

}  // namespace onyx::load
