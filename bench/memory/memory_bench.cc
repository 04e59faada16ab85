// onyx_memory_bench: planned activation memory and process peak RSS of a model.
//
//   onyx_memory_bench MODEL.onnx INPUT_0.pb [--runs N] [--buckets 1,2,4,8,16]
//
// Creates one session (or one per bucket, sharing weights, as onyxd does for a
// model's shape buckets), runs each N times on the input (its batch dim
// replaced by the bucket size), and prints one JSON line: the memory pattern's
// planned bytes vs the same buffers without reuse, the arena's reserved bytes,
// the process's peak RSS and the mean time per run.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "onyx/memory.h"
#include "onyx/session.h"
#include "onyx/value_io.h"

namespace {

long PeakRssKiB() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The input with its first dimension set to `batch` (rows repeated).
onyx::Tensor WithBatch(const onyx::Tensor& t, int64_t batch) {
  onyx::Dims dims = t.dims();
  if (dims.empty() || dims[0] == batch) return t;
  const size_t row = t.byte_size() / dims[0];
  dims[0] = batch;
  onyx::Tensor out = onyx::Tensor::Allocate(t.type(), dims);
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(static_cast<char*>(out.mutable_raw()) + b * row,
                static_cast<const char*>(t.raw()) + (b % t.dims()[0]) * row, row);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx INPUT_0.pb [--runs N] [--buckets 1,2,4]\n", argv[0]);
    return 2;
  }
  std::string model = argv[1], input = argv[2];
  int runs = 20;
  std::vector<int64_t> buckets;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--buckets") == 0) {
      for (char* tok = std::strtok(argv[i + 1], ","); tok; tok = std::strtok(nullptr, ",")) buckets.push_back(std::atoll(tok));
    }
  }
  auto value = onyx::ReadValueFile(input, onyx::ValueInfo::Kind::kTensor);
  if (!value.ok()) {
    std::fprintf(stderr, "%s\n", std::string(value.status().message()).c_str());
    return 1;
  }
  const bool bucketed = !buckets.empty();
  if (!bucketed) buckets.push_back(value->tensor().dims()[0]);
  std::vector<std::unique_ptr<onyx::InferenceSession>> sessions;
  for (int64_t b : buckets) {
    onyx::SessionOptions options;
    if (bucketed) options.shared_weights_group = model;
    auto session = onyx::InferenceSession::Create(model, options);
    if (!session.ok()) {
      std::fprintf(stderr, "%s\n", std::string(session.status().message()).c_str());
      return 1;
    }
    sessions.push_back(*std::move(session));
  }
  double total_ms = 0;
  int64_t timed = 0;
  for (size_t s = 0; s < sessions.size(); ++s) {
    onyx::Feeds feeds = {{sessions[s]->inputs()[0].name, onyx::Value(WithBatch(value->tensor(), buckets[s]))}};
    for (int r = 0; r < runs; ++r) {
      auto start = std::chrono::steady_clock::now();
      auto out = sessions[s]->Run(onyx::RunOptions(), feeds, {});
      auto end = std::chrono::steady_clock::now();
      if (!out.ok()) {
        std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
        return 1;
      }
      if (r > 0) {
        total_ms += std::chrono::duration<double, std::milli>(end - start).count();
        ++timed;
      }
    }
  }
  onyx::MemoryPlanInfo plan = sessions[0]->memory_plan_info();
  int64_t reserved = onyx::GetArenaStats()[0].reserved_bytes;
  std::printf("{\"engine\":\"onyx\",\"sessions\":%zu,\"planned_bytes\":%lld,\"without_reuse_bytes\":%lld,"
              "\"arena_reserved_bytes\":%lld,\"peak_rss_kib\":%ld,\"mean_ms\":%.3f}\n",
              sessions.size(), static_cast<long long>(plan.planned_bytes),
              static_cast<long long>(plan.without_reuse_bytes), static_cast<long long>(reserved), PeakRssKiB(),
              timed ? total_ms / timed : 0.0);
  return 0;
}
