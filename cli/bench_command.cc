#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/bench_inputs.h"
#include "cli/commands.h"
#include "onyx/session.h"

namespace onyx::cli {

const char kBenchHelp[] =
    "usage: onyx bench MODEL.onnx [flags]\n"
    "\n"
    "Creates a session with every input shape fixed (as onyxd's bucket sessions are),\n"
    "feeds seeded random inputs of the declared types, runs --warmup untimed runs and\n"
    "--iterations timed ones, and prints one JSON line: model, threads, batch, input\n"
    "shapes, session_ms (session creation), median_ms, p90_ms, min_ms, mean_ms,\n"
    "peak_rss_mb (the process's peak resident memory, VmHWM) and start_rss_mb (before\n"
    "the session was created).\n"
    "\n"
    "Inputs: floating point uniform in [-1, 1); bool 0/1; 8-bit integers over their\n"
    "non-negative range; other integers in [0, N), where N is the size of the axis\n"
    "they index when they feed Gather/GatherElements (an embedding table) or the\n"
    "tables of com.microsoft EmbedLayerNormalization (its mask: 0/1), else 8.\n"
    "\n"
    "flags:\n"
    "  --threads N            intra-op threads (default: the process's CPU quota)\n"
    "  --batch B              first dimension of every input whose first dimension is free (default 1)\n"
    "  --dim NAME=VALUE       every input dimension named NAME (repeatable)\n"
    "  --shape INPUT=D1,D2,.. the whole shape of INPUT (repeatable; wins over --batch and --dim)\n"
    "  --iterations K         timed runs (default 20)\n"
    "  --warmup K             untimed runs before them (default 3)\n"
    "  --providers LIST       execution providers in priority order (default cpu); one this\n"
    "                         host cannot offer is an error, never timed as CPU\n"
    "  --optimization LEVEL   disabled | basic | extended | all (default all)\n"
    "  --seed S               seed of the random inputs (default 0)\n"
    "  --op-stats             add \"op_ms\": milliseconds per timed run spent in each op type\n"
    "  --node-stats N         add \"node_ms\": the N nodes taking the most time per timed run\n"
    "                         (label, op type, ms), slowest first\n"
    "\n"
    "Exits 0 on success; 1 when the model fails to load or run; 2 for bad flags.\n";

namespace {

struct BenchFlags {
  std::string model;
  int threads = 0;
  ShapeFlags shape;
  int iterations = 20;
  int warmup = 3;
  std::vector<std::string> providers = {"cpu"};
  OptimizationLevel optimization = OptimizationLevel::kAll;
  uint64_t seed = 0;
  bool op_stats = false;
  int node_stats = 0;  // how many of the slowest nodes to list
};

int BadFlag(const std::string& message) {
  std::fprintf(stderr, "onyx bench: %s\n", message.c_str());
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "onyx bench: %s\n", message.c_str());
  return 1;
}

// Parses `text` as an integer in [min, max]; the error names the flag and the text.
template <typename T>
absl::StatusOr<T> ParseInt(const std::string& flag, const std::string& text, T min, T max, const char* what) {
  T value;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " expects ", what, ", received '", text, "'"));
  }
  return value;
}

// "NAME=VALUE" -> (NAME, VALUE); the error names the flag and the text.
absl::StatusOr<std::pair<std::string, std::string>> SplitAssignment(const std::string& flag, const std::string& text,
                                                                    const char* form) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " expects ", form, ", received '", text, "'"));
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

absl::Status ParseDim(const std::string& text, ShapeFlags& shape) {
  auto parts = SplitAssignment("--dim", text, "NAME=VALUE");
  if (!parts.ok()) return parts.status();
  int64_t value;
  if (!absl::SimpleAtoi(parts->second, &value) || value < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dim expects NAME=VALUE with a positive integer VALUE, received '", text, "'"));
  }
  if (!shape.dims.emplace(parts->first, value).second) {
    return absl::InvalidArgumentError(absl::StrCat("--dim ", parts->first, " given twice, received '", text, "'"));
  }
  return absl::OkStatus();
}

absl::Status ParseShape(const std::string& text, ShapeFlags& shape) {
  auto parts = SplitAssignment("--shape", text, "INPUT=D1,D2,...");
  if (!parts.ok()) return parts.status();
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(parts->second, ',')) {
    int64_t value;
    if (!absl::SimpleAtoi(d, &value) || value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shape expects INPUT=D1,D2,... with positive integer dimensions, received '", text, "'"));
    }
    dims.push_back(value);
  }
  if (!shape.shapes.emplace(parts->first, std::move(dims)).second) {
    return absl::InvalidArgumentError(absl::StrCat("--shape ", parts->first, " given twice, received '", text, "'"));
  }
  return absl::OkStatus();
}

// Fills `flags` from the arguments; returns an error naming the flag at fault.
absl::Status ParseFlags(const std::vector<std::string>& args, BenchFlags& flags) {
  static const char* const kValued[] = {"--threads", "--batch",     "--dim",          "--shape", "--iterations",
                                        "--warmup",  "--providers", "--optimization", "--seed",  "--node-stats"};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--op-stats") {
      flags.op_stats = true;
      continue;
    }
    if (a.empty() || a[0] != '-') {
      if (!flags.model.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("more than one model given ('", flags.model, "', '", a, "')"));
      }
      flags.model = a;
      continue;
    }
    if (std::find(std::begin(kValued), std::end(kValued), a) == std::end(kValued)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", a, "' (see onyx bench --help)"));
    }
    if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat("missing value for flag ", a));
    const std::string& value = args[++i];
    absl::Status status;
    if (a == "--threads") {
      auto n = ParseInt<int>(a, value, 1, 4096, "a positive integer");
      if (n.ok()) flags.threads = *n;
      status = n.status();
    } else if (a == "--batch") {
      auto n = ParseInt<int64_t>(a, value, 1, INT64_MAX, "a positive integer");
      if (n.ok()) {
        flags.shape.batch = *n;
        flags.shape.batch_given = true;
      }
      status = n.status();
    } else if (a == "--iterations") {
      auto n = ParseInt<int>(a, value, 1, INT32_MAX, "a positive integer");
      if (n.ok()) flags.iterations = *n;
      status = n.status();
    } else if (a == "--node-stats") {
      auto n = ParseInt<int>(a, value, 1, INT32_MAX, "a positive integer");
      if (n.ok()) flags.node_stats = *n;
      status = n.status();
    } else if (a == "--warmup") {
      auto n = ParseInt<int>(a, value, 0, INT32_MAX, "a non-negative integer");
      if (n.ok()) flags.warmup = *n;
      status = n.status();
    } else if (a == "--seed") {
      auto n = ParseInt<uint64_t>(a, value, 0, UINT64_MAX, "a non-negative integer");
      if (n.ok()) flags.seed = *n;
      status = n.status();
    } else if (a == "--dim") {
      status = ParseDim(value, flags.shape);
    } else if (a == "--shape") {
      status = ParseShape(value, flags.shape);
    } else if (a == "--providers") {
      flags.providers = SplitList(value);
      if (flags.providers.empty()) {
        status =
            absl::InvalidArgumentError(absl::StrCat("--providers expects a list such as cpu, received '", value, "'"));
      }
    } else if (a == "--optimization") {
      auto level = ParseOptimizationLevel(value);
      if (level.ok()) {
        flags.optimization = *level;
      } else {
        status = absl::InvalidArgumentError(absl::StrCat("--optimization: ", level.status().message()));
      }
    }
    if (!status.ok()) return status;
  }
  if (flags.model.empty()) return absl::InvalidArgumentError("no model given (see onyx bench --help)");
  return absl::OkStatus();
}

// Peak and current resident set size in KiB: VmHWM / VmRSS from
// /proc/self/status, or getrusage's ru_maxrss for both where /proc is absent.
std::pair<int64_t, int64_t> ResidentKiB() {
  int64_t peak = -1, current = -1;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest(line);
    int64_t* target = nullptr;
    if (absl::ConsumePrefix(&rest, "VmHWM:")) target = &peak;
    if (absl::ConsumePrefix(&rest, "VmRSS:")) target = &current;
    if (target == nullptr) continue;
    absl::ConsumeSuffix(&rest, "kB");
    if (!absl::SimpleAtoi(rest, target)) *target = -1;
  }
  if (peak < 0 || current < 0) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    if (peak < 0) peak = usage.ru_maxrss;
    if (current < 0) current = usage.ru_maxrss;
  }
  return {peak, current};
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Nanoseconds per op type over all runs so far.
std::map<std::string, int64_t> OpTotals(const InferenceSession& session) {
  std::map<std::string, int64_t> totals;
  for (const KernelStats& s : session.op_type_stats()) totals[s.op_type] += s.total_ns;
  return totals;
}

}  // namespace

int BenchCommand(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(kBenchHelp, stdout);
      return 0;
    }
  }
  BenchFlags flags;
  if (absl::Status s = ParseFlags(args, flags); !s.ok()) return BadFlag(std::string(s.message()));

  auto model = ReadModelInputs(flags.model);
  if (!model.ok()) return Fail(std::string(model.status().message()));
  auto shapes = ResolveShapes(model->inputs, flags.shape);
  if (!shapes.ok()) {
    return shapes.status().code() == absl::StatusCode::kInvalidArgument
               ? BadFlag(std::string(shapes.status().message()))
               : Fail(std::string(shapes.status().message()));
  }

  SessionOptions options;
  options.providers = flags.providers;
  // A figure labelled "cuda" must not be CPU's.
  options.require_providers = true;
  options.optimization_level = flags.optimization;
  options.intra_op_threads = flags.threads > 0 ? flags.threads : ProcessCpuQuota();
  options.input_shape_overrides = *shapes;
  const int64_t start_rss_kib = ResidentKiB().second;
  const auto created = std::chrono::steady_clock::now();
  auto session = InferenceSession::Create(flags.model, options);
  const double session_ms = Ms(std::chrono::steady_clock::now() - created);
  if (!session.ok()) return Fail(std::string(session.status().message()));

  std::mt19937_64 rng(flags.seed);
  Feeds feeds;
  std::string inputs_json;  // {"name": {"type", "shape", "low", "high"}, ...}
  for (const ValueInfo& v : (*session)->inputs()) {
    auto shape = shapes->find(v.name);
    if (shape == shapes->end()) continue;  // optional inputs stay unfed
    auto bound = model->index_bounds.find(v.name);
    const int64_t index_bound = bound == model->index_bounds.end() ? 0 : bound->second;
    auto range = RandomValueRange(v.type, index_bound);
    auto tensor = RandomTensor(v.type, shape->second, index_bound, rng);
    if (!tensor.ok()) return Fail(absl::StrCat("input '", v.name, "': ", tensor.status().message()));
    feeds.emplace_back(v.name, *std::move(tensor));
    absl::StrAppend(&inputs_json, inputs_json.empty() ? "" : ", ", JsonString(v.name), ": {\"type\": \"",
                    DataTypeName(v.type), "\", \"shape\": [", absl::StrJoin(shape->second, ", "),
                    "], \"low\": ", range->low, ", \"high\": ", range->high, "}");
  }

  for (int i = 0; i < flags.warmup; ++i) {
    auto outputs = (*session)->Run(RunOptions(), feeds, {});
    if (!outputs.ok()) return Fail(std::string(outputs.status().message()));
  }
  const auto ops_before = OpTotals(**session);
  const auto nodes_before = (*session)->kernel_stats();
  std::vector<double> ms;
  ms.reserve(flags.iterations);
  for (int i = 0; i < flags.iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto outputs = (*session)->Run(RunOptions(), feeds, {});
    ms.push_back(Ms(std::chrono::steady_clock::now() - start));
    if (!outputs.ok()) return Fail(std::string(outputs.status().message()));
  }
  const int64_t peak_rss_kib = ResidentKiB().first;

  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const double p90 = sorted[static_cast<size_t>(std::ceil(0.9 * n)) - 1];  // nearest rank
  double mean = 0;
  for (double x : ms) mean += x / n;

  std::string line = absl::StrFormat(
      "{\"engine\": \"onyx\", \"model\": %s, \"providers\": %s, \"threads\": %d, \"batch\": %d, \"inputs\": {%s}, "
      "\"seed\": %d, \"warmup\": %d, \"iterations\": %d, \"session_ms\": %.3f, \"median_ms\": %.3f, \"p90_ms\": %.3f, "
      "\"min_ms\": %.3f, \"mean_ms\": %.3f, \"peak_rss_mb\": %.1f, \"start_rss_mb\": %.1f",
      JsonString(flags.model), JsonString(absl::StrJoin(flags.providers, ",")), options.intra_op_threads,
      flags.shape.batch, inputs_json, flags.seed, flags.warmup, flags.iterations, session_ms, median, p90, sorted[0],
      mean, peak_rss_kib / 1024.0, start_rss_kib / 1024.0);
  if (flags.op_stats) {
    std::vector<std::pair<double, std::string>> per_op;
    for (const auto& [op, total] : OpTotals(**session)) {
      auto before = ops_before.find(op);
      const int64_t ns = total - (before == ops_before.end() ? 0 : before->second);
      per_op.emplace_back(ns / 1e6 / flags.iterations, op);
    }
    std::sort(per_op.rbegin(), per_op.rend());
    std::string ops_json;
    for (const auto& [op_ms, op] : per_op) {
      absl::StrAppend(&ops_json, ops_json.empty() ? "" : ", ", JsonString(op), ": ", absl::StrFormat("%.3f", op_ms));
    }
    absl::StrAppend(&line, ", \"op_ms\": {", ops_json, "}");
  }
  if (flags.node_stats > 0) {
    // kernel_stats() lists the same nodes in the same order on every call.
    const std::vector<KernelStats> nodes = (*session)->kernel_stats();
    std::vector<std::pair<double, size_t>> per_node;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int64_t before = i < nodes_before.size() ? nodes_before[i].total_ns : 0;
      per_node.emplace_back((nodes[i].total_ns - before) / 1e6 / flags.iterations, i);
    }
    std::stable_sort(per_node.begin(), per_node.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    per_node.resize(std::min(per_node.size(), static_cast<size_t>(flags.node_stats)));
    std::string nodes_json;
    for (const auto& [node_ms, i] : per_node) {
      absl::StrAppend(&nodes_json, nodes_json.empty() ? "" : ", ", "[", JsonString(nodes[i].node), ", ",
                      JsonString(nodes[i].op_type), ", ", absl::StrFormat("%.3f", node_ms), "]");
    }
    absl::StrAppend(&line, ", \"node_ms\": [", nodes_json, "]");
  }
  std::printf("%s}\n", line.c_str());
  return 0;
}

}  // namespace onyx::cli
