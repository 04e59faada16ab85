// onyx_serving_bench: served vs in-process throughput and latency.
//
//   onyx_serving_bench served --address HOST:PORT --model NAME [--concurrency C] [--batch B]
//   onyx_serving_bench empty  --address HOST:PORT [--concurrency C]
//   onyx_serving_bench engine --model-file MODEL.onnx [--batch B] [--threads T] [--intra-op-threads N]
//   common: [--seconds S (3)] [--warmup S (0.5)] [--client-threads T (1)]
//
// `served` keeps C ModelInfer calls of B rows outstanding against onyxd,
// `empty` does the same with ServerLive (the empty unary call), `engine` runs
// the bucket session onyxd would build for batch B from T threads in this
// process. Prints one JSON line: throughput (items and rows per second) and
// mean/P50/P99/P99.9/max latency in microseconds over the measured window,
// and the CPU seconds this process used (warm-up and set-up included).
// Exit status: 0 when every reply was well-formed and at least one completed,
// 1 on any failed or malformed reply (the first is in "first_error"), 2 on bad
// flags.
#include <sys/resource.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/serving/engine_load.h"
#include "bench/serving/served_load.h"

namespace {

int Usage(const char* problem) {
  std::fprintf(stderr,
               "%s\nusage: onyx_serving_bench served --address HOST:PORT --model NAME [--concurrency C] "
               "[--batch B]\n"
               "       onyx_serving_bench empty --address HOST:PORT [--concurrency C]\n"
               "       onyx_serving_bench engine --model-file MODEL.onnx [--batch B] [--threads T] "
               "[--intra-op-threads N]\n"
               "       common: [--seconds S] [--warmup S] [--client-threads T]\n",
               problem);
  return 2;
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

// The whole of `text` as a non-negative (finite) T; false for anything else.
template <typename T>
bool ParseNonNegative(const char* text, T* out) {
  const char* end = text + std::strlen(text);
  T value{};
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || !(value >= 0) || !std::isfinite(static_cast<double>(value))) return false;
  *out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage("missing mode");
  const std::string mode = argv[1];
  if (mode != "served" && mode != "empty" && mode != "engine") {
    return Usage(("unknown mode '" + mode + "' (expected served, empty or engine)").c_str());
  }
  onyx::bench::ServedLoadOptions served;
  onyx::bench::EngineLoadOptions engine;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Usage(("flag " + flag + " needs a value").c_str());
    const char* value = argv[i + 1];
    if (flag == "--address") {
      served.address = value;
      continue;
    }
    if (flag == "--model") {
      served.model = value;
      continue;
    }
    if (flag == "--model-file") {
      engine.model_path = value;
      continue;
    }
    int* int_flag = flag == "--concurrency"        ? &served.concurrency
                    : flag == "--threads"          ? &engine.threads
                    : flag == "--intra-op-threads" ? &engine.intra_op_threads
                    : flag == "--client-threads"   ? &served.client_threads
                                                   : nullptr;
    int64_t batch = 0;
    double seconds = 0;
    if (int_flag != nullptr || flag == "--batch") {
      if (int_flag != nullptr ? !ParseNonNegative(value, int_flag) : !ParseNonNegative(value, &batch)) {
        return Usage(("flag " + flag + " needs a non-negative integer, got '" + value + "'").c_str());
      }
      if (flag == "--batch") served.batch = engine.batch = batch;
    } else if (flag == "--seconds" || flag == "--warmup") {
      if (!ParseNonNegative(value, &seconds)) {
        return Usage(("flag " + flag + " needs a non-negative number, got '" + value + "'").c_str());
      }
      if (flag == "--seconds") served.seconds = engine.seconds = seconds;
      if (flag == "--warmup") served.warmup_s = engine.warmup_s = seconds;
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  if (served.batch < 1 || served.concurrency < 1 || engine.threads < 1 || served.seconds <= 0) {
    return Usage("--batch, --concurrency, --threads and --seconds must be positive");
  }
  absl::StatusOr<onyx::bench::LoadSummary> summary;
  std::string name;
  int concurrency = served.concurrency;
  if (mode == "engine") {
    if (engine.model_path.empty()) return Usage("engine mode needs --model-file");
    name = engine.model_path;
    concurrency = engine.threads;
    summary = onyx::bench::RunEngineLoad(engine);
  } else {
    if (served.address.empty()) return Usage("served and empty modes need --address");
    if (mode == "served" && served.model.empty()) return Usage("served mode needs --model");
    if (mode == "empty") served.model.clear();
    name = served.model;
    summary = onyx::bench::RunServedLoad(served);
  }
  if (!summary.ok()) {
    std::fprintf(stderr, "onyx_serving_bench %s: %s\n", mode.c_str(), std::string(summary.status().message()).c_str());
    return 1;
  }
  const onyx::bench::LoadSummary& s = *summary;
  // CPU this process used (client side of a served run; all of an engine run),
  // to show how the 2 cores were shared.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::printf(
      "{\"mode\":\"%s\",\"model\":\"%s\",\"concurrency\":%d,\"batch\":%lld,\"items\":%lld,"
      "\"rows\":%lld,\"seconds\":%.3f,\"items_per_s\":%.1f,\"rows_per_s\":%.1f,\"mean_us\":%.1f,\"p50_us\":%.1f,"
      "\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"errors\":%lld,\"dropped\":%lld,\"process_cpu_s\":%.3f,"
      "\"first_error\":\"%s\"}\n",
      mode.c_str(), JsonEscape(name).c_str(), concurrency, static_cast<long long>(mode == "empty" ? 0 : served.batch),
      static_cast<long long>(s.items), static_cast<long long>(s.rows), s.seconds, s.items_per_s, s.rows_per_s,
      s.mean_us, s.p50_us, s.p99_us, s.p999_us, s.max_us, static_cast<long long>(s.errors),
      static_cast<long long>(s.dropped), cpu_s, JsonEscape(s.first_error).c_str());
  return s.errors == 0 && s.items > 0 ? 0 : 1;
}
