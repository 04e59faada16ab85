#include "server/models/bucket_sessions.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/memory.h"
#include "onyx/status_macros.h"
#include "onyx/value_io.h"
#include "spdlog/spdlog.h"

namespace onyx::server {
namespace {

using Warmup = BucketSessions::Options::Warmup;

// "[batch, 4]": the model's dims, symbolic ones by name ("?" when unnamed).
std::string ShapeText(const onyx::ValueInfo& input) {
  std::vector<std::string> parts;
  for (size_t a = 0; a < input.dims.size(); ++a) {
    if (input.dims[a] >= 0) {
      parts.push_back(absl::StrCat(input.dims[a]));
    } else {
      const bool named = a < input.dim_params.size() && !input.dim_params[a].empty();
      parts.push_back(named ? input.dim_params[a] : "?");
    }
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

// Reads and checks one sample per graph input, by input name (see the header
// for the rule).
absl::StatusOr<std::map<std::string, onyx::Tensor>> LoadSamples(const BucketSessions::Options& options) {
  namespace fs = std::filesystem;
  std::map<std::string, onyx::Tensor> samples;
  const std::string where = absl::StrCat("model '", options.model_name, "': warm-up");
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const onyx::ValueInfo& input = options.inputs[i];
    const fs::path by_name = fs::path(options.warmup.sample_dir) / (input.name + ".pb");
    const fs::path by_index = fs::path(options.warmup.sample_dir) / absl::StrCat("input_", i, ".pb");
    std::error_code error;
    const std::string file = fs::is_regular_file(by_name, error)    ? by_name.string()
                             : fs::is_regular_file(by_index, error) ? by_index.string()
                                                                    : std::string();
    if (file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " input '", input.name, "': expected sample file '",
                                                     by_name.string(), "' or '", by_index.string(),
                                                     "', found neither"));
    }
    absl::StatusOr<onyx::Value> value = onyx::ReadValueFile(file, onyx::ValueInfo::Kind::kTensor);
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " sample '", file, "' for input '", input.name, "': ", value.status().message()));
    }
    const onyx::Tensor& tensor = value->tensor();
    const std::string what = absl::StrCat(where, " sample '", file, "' for input '", input.name, "'");
    if (tensor.type() != input.type) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": expected type ", onyx::DataTypeName(input.type),
                                                     ", received ", onyx::DataTypeName(tensor.type())));
    }
    bool fits = tensor.rank() == static_cast<int64_t>(input.dims.size());
    for (size_t a = 0; fits && a < input.dims.size(); ++a) {
      // Dims the model fixes must match; the others are tiled, so need one element.
      fits = input.dims[a] >= 0 ? tensor.dims()[a] == input.dims[a] : tensor.dims()[a] >= 1;
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": expected shape ", ShapeText(input),
                                                     " (symbolic dims >= 1), received ",
                                                     onyx::DimsToString(tensor.dims())));
    }
    samples.emplace(input.name, tensor);
  }
  return samples;
}

// `sample` tiled or cut to `dims` (same rank): element j takes sample element j
// mod the sample's size along every axis.
onyx::Tensor Tile(const onyx::Tensor& sample, const std::vector<int64_t>& dims) {
  onyx::Tensor out = onyx::Tensor::Allocate(sample.type(), dims);
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t a = rank; a-- > 1;) strides[a - 1] = strides[a] * sample.dims()[a];
  const bool strings = sample.type() == onyx::DataType::kString;
  const size_t size = onyx::ElementSize(sample.type());
  const auto* from = static_cast<const char*>(sample.raw());
  auto* to = static_cast<char*>(out.mutable_raw());
  std::vector<int64_t> index(rank, 0);
  for (int64_t j = 0; j < out.num_elements(); ++j) {
    int64_t source = 0;
    for (size_t a = 0; a < rank; ++a) source += (index[a] % sample.dims()[a]) * strides[a];
    if (strings) {
      out.mutable_data<std::string>()[j] = sample.data<std::string>()[source];
    } else {
      std::memcpy(to + j * size, from + source * size, size);
    }
    for (size_t a = rank; a-- > 0;) {
      if (++index[a] < dims[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

template <typename T>
void FillSmallInts(onyx::Tensor& tensor, std::mt19937& random) {
  T* data = tensor.mutable_data<T>();
  for (int64_t j = 0; j < tensor.num_elements(); ++j) data[j] = static_cast<T>(random() % 16);
}

// Deterministic values of `type`: floats in [0, 1), integers in [0, 16) (valid
// as small indices, e.g. embedding ids), bools 0/1; strings stay empty.
onyx::Tensor RandomTensor(onyx::DataType type, const std::vector<int64_t>& dims, std::mt19937& random) {
  using onyx::DataType;
  onyx::Tensor tensor = onyx::Tensor::Allocate(type, dims);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int64_t n = tensor.num_elements();
  switch (type) {
    case DataType::kFloat:
      for (int64_t j = 0; j < n; ++j) tensor.mutable_data<float>()[j] = unit(random);
      break;
    case DataType::kDouble:
      for (int64_t j = 0; j < n; ++j) tensor.mutable_data<double>()[j] = unit(random);
      break;
    case DataType::kFloat16:
      for (int64_t j = 0; j < n; ++j) tensor.mutable_data<uint16_t>()[j] = onyx::FloatToHalf(unit(random));
      break;
    case DataType::kBFloat16:
      for (int64_t j = 0; j < n; ++j) tensor.mutable_data<uint16_t>()[j] = onyx::FloatToBFloat16(unit(random));
      break;
    case DataType::kBool:
      for (int64_t j = 0; j < n; ++j) tensor.mutable_data<bool>()[j] = (random() & 1) != 0;
      break;
    case DataType::kUint8: FillSmallInts<uint8_t>(tensor, random); break;
    case DataType::kInt8: FillSmallInts<int8_t>(tensor, random); break;
    case DataType::kUint16: FillSmallInts<uint16_t>(tensor, random); break;
    case DataType::kInt16: FillSmallInts<int16_t>(tensor, random); break;
    case DataType::kInt32: FillSmallInts<int32_t>(tensor, random); break;
    case DataType::kInt64: FillSmallInts<int64_t>(tensor, random); break;
    case DataType::kUint32: FillSmallInts<uint32_t>(tensor, random); break;
    case DataType::kUint64: FillSmallInts<uint64_t>(tensor, random); break;
    default: break;  // strings (and types the server refuses) stay zero/empty
  }
  return tensor;
}

// Warm-up feeds matching the session's (now fixed) input shapes.
onyx::Feeds WarmupFeeds(const onyx::InferenceSession& session, const Warmup& warmup,
                        const std::map<std::string, onyx::Tensor>& samples) {
  onyx::Feeds feeds;
  std::mt19937 random(20240601);  // the same values at every load
  for (const onyx::ValueInfo& input : session.inputs()) {
    std::vector<int64_t> dims = input.dims;
    auto sample = samples.find(input.name);
    if (warmup.inputs == Warmup::Inputs::kSamples && sample != samples.end()) {
      for (size_t a = 0; a < dims.size(); ++a) {
        if (dims[a] < 0) dims[a] = sample->second.dims()[a];
      }
      feeds.emplace_back(input.name, onyx::Value(Tile(sample->second, dims)));
      continue;
    }
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    feeds.emplace_back(input.name, warmup.inputs == Warmup::Inputs::kRandom
                                       ? onyx::Value(RandomTensor(input.type, dims, random))
                                       : onyx::Value(onyx::Tensor::Allocate(input.type, dims)));
  }
  return feeds;
}

// One session's fixed sizes: the batch bucket (0: none) and one size per padded dim.
struct SessionShape {
  int64_t bucket = 0;
  std::vector<int64_t> sizes;
  std::string Label() const {
    std::vector<int64_t> parts;
    if (bucket > 0) parts.push_back(bucket);
    parts.insert(parts.end(), sizes.begin(), sizes.end());
    return parts.empty() ? std::string("none") : absl::StrJoin(parts, "x");
  }
};

// Every session shape in SessionIndex order: batch-major, last padded dim fastest.
std::vector<SessionShape> SessionShapes(const std::vector<int64_t>& buckets,
                                        const std::vector<PaddedDim>& padded_dims) {
  std::vector<SessionShape> shapes;
  for (int64_t bucket : buckets.empty() ? std::vector<int64_t>{0} : buckets) {
    shapes.push_back(SessionShape{bucket, {}});
  }
  for (const PaddedDim& dim : padded_dims) {
    std::vector<SessionShape> next;
    for (const SessionShape& shape : shapes) {
      for (int64_t size : dim.sizes) {
        SessionShape more = shape;
        more.sizes.push_back(size);
        next.push_back(std::move(more));
      }
    }
    shapes = std::move(next);
  }
  return shapes;
}

absl::StatusOr<std::unique_ptr<onyx::InferenceSession>> CreateWarmSession(
    const BucketSessions::Options& options, const SessionShape& shape,
    const std::map<std::string, onyx::Tensor>& samples) {
  onyx::SessionOptions session_options = options.session_options;
  session_options.model_name = options.model_name;
  // Every bucket of this model file shares one copy of the weights.
  session_options.shared_weights_group = options.model_path;
  const std::string what = shape.bucket > 0 || !shape.sizes.empty()
                               ? absl::StrCat("bucket ", shape.Label())
                               : std::string("session");
  if (shape.bucket > 0 || !shape.sizes.empty()) {
    for (const onyx::ValueInfo& input : options.inputs) {
      std::vector<int64_t> dims(input.dims.size(), -1);
      if (shape.bucket > 0) {
        if (dims.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", input.name, "' has no batch dimension"));
        }
        dims[0] = shape.bucket;
      }
      for (size_t d = 0; d < options.padded_dims.size(); ++d) {
        for (const PaddedDim::Use& use : options.padded_dims[d].inputs) {
          if (use.tensor == input.name && use.axis < dims.size()) dims[use.axis] = shape.sizes[d];
        }
      }
      session_options.input_shape_overrides[input.name] = std::move(dims);
    }
  }
  auto session = onyx::InferenceSession::Create(options.model_path, session_options);
  if (!session.ok()) {
    return absl::Status(session.status().code(),
                        absl::StrCat(what, ": ", session.status().message()));
  }
  onyx::RunOptions run_options;
  run_options.run_tag = "warmup";
  if (options.warmup.runs > 0) {
    const onyx::Feeds feeds = WarmupFeeds(**session, options.warmup, samples);
    for (int64_t run = 0; run < options.warmup.runs; ++run) {
      auto warm = (*session)->Run(run_options, feeds, {});
      if (!warm.ok()) {
        return absl::Status(warm.status().code(),
                            absl::StrCat(what, ": warm-up run failed: ", warm.status().message()));
      }
    }
  }
  return std::move(*session);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BucketSessions>> BucketSessions::Create(const Options& options) {
  std::map<std::string, onyx::Tensor> samples;
  if (options.warmup.runs > 0 && options.warmup.inputs == Warmup::Inputs::kSamples) {
    ASSIGN_OR_RETURN(samples, LoadSamples(options));
  }
  std::vector<std::unique_ptr<onyx::InferenceSession>> sessions;
  for (const SessionShape& shape : SessionShapes(options.buckets, options.padded_dims)) {
    ASSIGN_OR_RETURN(auto session, CreateWarmSession(options, shape, samples));
    sessions.push_back(std::move(session));
  }
  return std::unique_ptr<BucketSessions>(
      new BucketSessions(options.model_name, options.buckets, options.padded_dims,
                         std::move(sessions)));
}

BucketSessions::BucketSessions(std::string model_name, std::vector<int64_t> buckets,
                               std::vector<PaddedDim> padded_dims,
                               std::vector<std::unique_ptr<onyx::InferenceSession>> sessions)
    : model_name_(std::move(model_name)),
      buckets_(std::move(buckets)),
      padded_dims_(std::move(padded_dims)),
      sessions_(std::move(sessions)) {}

absl::StatusOr<std::vector<onyx::Value>> BucketSessions::Run(
    size_t bucket_index, const onyx::Feeds& feeds,
    const std::vector<std::string>& output_names) const {
  if (bucket_index >= sessions_.size()) {
    return absl::InternalError(absl::StrCat("no session for bucket index ", bucket_index));
  }
  auto outputs = sessions_[bucket_index]->Run(onyx::RunOptions(), feeds, output_names);
  if (!outputs.ok()) MaybeDumpArenas(outputs.status());
  return outputs;
}

void BucketSessions::MaybeDumpArenas(const absl::Status& status) const {
  if (!absl::IsResourceExhausted(status) || !arena_dumps_.Allow(absl::Now())) return;
  spdlog::error("model '{}': engine run failed ({}); arena state:\n{}", model_name_,
                std::string(status.message()), onyx::DumpArenaLogs());
}

std::string BucketSessions::bucket_label(size_t index) const {
  const std::vector<SessionShape> shapes = SessionShapes(buckets_, padded_dims_);
  return index < shapes.size() ? shapes[index].Label() : std::string("none");
}

}  // namespace onyx::server
