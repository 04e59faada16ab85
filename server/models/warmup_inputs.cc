#include "server/models/warmup_inputs.h"

#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/value_io.h"

namespace onyx::server {
namespace {

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

}  // namespace

absl::StatusOr<WarmupSamples> LoadWarmupSamples(const std::string& model_name,
                                                const std::vector<onyx::ValueInfo>& inputs,
                                                const std::string& sample_dir) {
  namespace fs = std::filesystem;
  WarmupSamples samples;
  const std::string where = absl::StrCat("model '", model_name, "': warm-up");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const onyx::ValueInfo& input = inputs[i];
    const fs::path by_name = fs::path(sample_dir) / (input.name + ".pb");
    const fs::path by_index = fs::path(sample_dir) / absl::StrCat("input_", i, ".pb");
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

namespace {

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

}  // namespace

onyx::Feeds WarmupFeeds(const std::vector<onyx::ValueInfo>& session_inputs, const WarmupSpec& warmup,
                        const WarmupSamples& samples) {
  onyx::Feeds feeds;
  std::mt19937 random(20240601);  // the same values at every load
  for (const onyx::ValueInfo& input : session_inputs) {
    std::vector<int64_t> dims = input.dims;
    auto sample = samples.find(input.name);
    if (warmup.inputs == WarmupSpec::Inputs::kSamples && sample != samples.end()) {
      for (size_t a = 0; a < dims.size(); ++a) {
        if (dims[a] < 0) dims[a] = sample->second.dims()[a];
      }
      feeds.emplace_back(input.name, onyx::Value(Tile(sample->second, dims)));
      continue;
    }
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    feeds.emplace_back(input.name, warmup.inputs == WarmupSpec::Inputs::kRandom
                                       ? onyx::Value(RandomTensor(input.type, dims, random))
                                       : onyx::Value(onyx::Tensor::Allocate(input.type, dims)));
  }
  return feeds;
}

}  // namespace onyx::server
