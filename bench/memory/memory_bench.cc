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

#include <algorithm>
#include <charconv>
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

int Usage(const char* program, const std::string& problem) {
  std::fprintf(stderr, "%s\nusage: %s MODEL.onnx INPUT_0.pb [--runs N] [--buckets 1,2,4]\n", problem.c_str(), program);
  return 2;
}

// The whole of `text` as an integer of at least 1; false for anything else.
template <typename T>
bool ParsePositive(const std::string& text, T* out) {
  T value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 1) return false;
  *out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage(argv[0], "missing MODEL.onnx or INPUT_0.pb");
  std::string model = argv[1], input = argv[2];
  int runs = 20;
  std::vector<int64_t> buckets;
  for (int i = 3; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Usage(argv[0], "flag " + flag + " needs a value");
    const std::string value = argv[i + 1];
    if (flag == "--runs") {
      if (!ParsePositive(value, &runs)) return Usage(argv[0], "--runs needs a positive integer, got '" + value + "'");
    } else if (flag == "--buckets") {
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = std::min(value.find(',', start), value.size());
        int64_t bucket = 0;
        if (!ParsePositive(value.substr(start, comma - start), &bucket)) {
          return Usage(argv[0], "--buckets needs a comma-separated list of positive integers, got '" + value + "'");
        }
        buckets.push_back(bucket);
        start = comma + 1;
      }
    } else {
      return Usage(argv[0], "unknown flag " + flag);
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
  std::printf(
      "{\"engine\":\"onyx\",\"sessions\":%zu,\"planned_bytes\":%lld,\"without_reuse_bytes\":%lld,"
      "\"arena_reserved_bytes\":%lld,\"peak_rss_kib\":%ld,\"mean_ms\":%.3f}\n",
      sessions.size(), static_cast<long long>(plan.planned_bytes), static_cast<long long>(plan.without_reuse_bytes),
      static_cast<long long>(reserved), PeakRssKiB(), timed ? total_ms / timed : 0.0);
  return 0;
}
