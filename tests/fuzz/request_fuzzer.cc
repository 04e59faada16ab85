// ModelInferRequest bytes through the server's one door (DecodeInferRequest:
// decode, resolve shared memory, admit, validate) against fixed model
// signatures, with a registered 256-byte shared-memory region named "region".
// The request's model_name picks the signature ("mlp" when it names none).
// A request that decodes must hold what its signature promises.
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/grpc/request_decoder.h"
#include "server/memory/test_region.h"
#include "tests/fuzz/fuzz_target.h"

namespace onyx::fuzz {
namespace {

using onyx::DataType;
using server::ModelSignature;
using server::TensorSpec;

struct Fixture {
  std::string name;
  std::vector<TensorSpec> inputs, outputs;
  int64_t max_batch_size = 0;
  ModelSignature signature() const { return {name, inputs, outputs, max_batch_size}; }
};

const std::vector<Fixture>& Fixtures() {
  static const auto* fixtures = new std::vector<Fixture>{
      // A batched float model.
      {"mlp", {{"input", DataType::kFloat, {-1, 16}}}, {{"output", DataType::kFloat, {-1, 4}}}, 8},
      // BYTES in, free dimension, no batching.
      {"strings", {{"text", DataType::kString, {-1}}}, {{"length", DataType::kInt64, {-1}}}, 0},
      // Several inputs of other types, a scalar among them.
      {"mixed",
       {{"ids", DataType::kInt64, {2, -1}}, {"mask", DataType::kBool, {2, -1}}, {"scale", DataType::kFloat16, {}}},
       {{"y", DataType::kFloat, {2, -1}}, {"z", DataType::kInt32, {}, false}},
       0},
  };
  return *fixtures;
}

server::TestRegion& Region() {
  static auto* region = [] {
    auto* r = new server::TestRegion("fuzz", 256);
    Require(r->ok(), "cannot create the shared-memory region");
    for (int i = 0; i < 256; ++i) r->data()[i] = static_cast<char>(i);
    return r;
  }();
  return *region;
}

}  // namespace
}  // namespace onyx::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onyx::fuzz;  // NOLINT: the target's own namespace
  inference::ModelInferRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const Fixture* fixture = &Fixtures()[0];
  for (const Fixture& f : Fixtures()) {
    if (f.name == request.model_name()) fixture = &f;
  }
  onyx::server::ParseLimits limits;
  limits.max_elements_per_input = 1 << 16;
  int64_t admitted = -1;
  auto decoded =
      onyx::server::DecodeInferRequest(request, fixture->signature(), Region().registry(), limits, [&](int64_t bytes) {
        admitted = bytes;
        return bytes > (int64_t{64} << 20) ? absl::ResourceExhaustedError("over budget") : absl::OkStatus();
      });
  if (!decoded.ok()) {
    Require(!decoded.status().message().empty(), "a refused request without a message");
    return 0;
  }
  Require(admitted == decoded->bytes, "admitted bytes differ from the decoded request's");
  const onyx::server::InferenceRequest& r = *decoded->request;
  Require(r.inputs.size() == fixture->inputs.size(), "decoded inputs differ from the signature's");
  Require(!r.output_names.empty(), "no outputs to produce");
  for (const auto& [name, value] : r.inputs) {
    Require(value.is_tensor(), "an input that is not a tensor");
    const onyx::Tensor& t = value.tensor();
    const TensorSpec* spec = nullptr;
    for (const TensorSpec& s : fixture->inputs) {
      if (s.name == name) spec = &s;
    }
    Require(spec != nullptr, "an input the signature does not have");
    Require(t.type() == spec->type, "an input of another type than its signature's");
    Require(t.rank() == static_cast<int64_t>(spec->dims.size()), "an input of another rank");
    for (size_t d = 0; d < spec->dims.size(); ++d) {
      Require(spec->dims[d] < 0 || t.dims()[d] == spec->dims[d], "an input dim off its fixed value");
    }
    Require(t.num_elements() <= limits.max_elements_per_input, "an input over max_elements_per_input");
    if (fixture->max_batch_size > 0) {
      Require(t.dims()[0] == r.batch_size && r.batch_size >= 1 && r.batch_size <= fixture->max_batch_size,
              "a batch outside [1, max_batch_size] or inputs that disagree on it");
    }
    ReadEveryByte(t);
  }
  Accepted();
  return 0;
}
