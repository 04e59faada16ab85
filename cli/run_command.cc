#include <sys/stat.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <string>

#include "cli/commands.h"
#include "onyx/session.h"
#include "onyx/value_io.h"

namespace onyx::cli {

const char kRunHelp[] =
    "usage: onyx run --model MODEL.onnx --inputs DIR --outputs DIR [flags]\n"
    "\n"
    "Reads DIR/input_0.pb, input_1.pb, ... (one per graph input, in graph input order;\n"
    "TensorProto, or SequenceProto / OptionalProto for sequence- and optional-typed\n"
    "inputs; trailing optional inputs may be absent), runs the model once and writes\n"
    "output_0.pb, output_1.pb, ... in graph output order, in the same formats.\n"
    "\n"
    "flags:\n"
    "  --model PATH            the ONNX model file (required)\n"
    "  --inputs DIR            directory holding input_N.pb files (required)\n"
    "  --outputs DIR           directory to write output_N.pb files to (created if missing)\n"
    "  --optimization LEVEL    graph rewriting: disabled | basic | extended | all (default all)\n"
    "  --providers LIST        execution providers in priority order, e.g. cuda,cpu (default cpu)\n"
    "  --custom-op-library PATH  a custom-operator library to load (repeatable)\n"
    "  --require-providers     fail when a listed provider is unavailable here, instead of\n"
    "                          running its nodes on CPU (counted as fallback)\n"
    "  --optimized-model PATH  also write the rewritten graph to PATH\n"
    "  --threads N             intra-op threads (default: the process's CPU quota)\n"
    "  --repeat N              run N times (steady-state memory and timing); writes the last outputs\n"
    "\n"
    "Exits 0 on success; otherwise prints one line with the reason and exits 1\n"
    "(2 for bad flags).\n";

namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The most intra-op threads a flag may ask for (as a model's config.yaml).
constexpr int64_t kMaxThreads = 1024;

int Fail(const std::string& message) {
  std::fprintf(stderr, "onyx run: %s\n", message.c_str());
  return 1;
}

int BadFlag(const absl::Status& status) {
  std::fprintf(stderr, "onyx run: %s (see onyx run --help)\n", std::string(status.message()).c_str());
  return 2;
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  std::map<std::string, std::string> flags;
  std::vector<std::string> custom_op_libraries;
  bool require_providers = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kRunHelp, stdout);
      return 0;
    }
    if (args[i] == "--custom-op-library" && i + 1 < args.size()) {
      custom_op_libraries.push_back(args[++i]);
      continue;
    }
    if (args[i] == "--require-providers") {
      require_providers = true;
      continue;
    }
    static const char* kKnown[] = {"--model",           "--inputs",  "--outputs", "--optimization",     "--providers",
                                   "--optimized-model", "--threads", "--repeat",  "--custom-op-library"};
    bool known = false;
    for (const char* k : kKnown) known |= args[i] == k;
    if (!known || i + 1 >= args.size()) {
      std::fprintf(stderr, "onyx run: %s '%s' (see onyx run --help)\n",
                   known ? "missing value for flag" : "unknown flag", args[i].c_str());
      return 2;
    }
    flags[args[i]] = args[i + 1];
    ++i;
  }
  for (const char* required : {"--model", "--inputs", "--outputs"}) {
    if (!flags.count(required)) {
      std::fprintf(stderr, "onyx run: missing required flag %s (see onyx run --help)\n", required);
      return 2;
    }
  }
  SessionOptions options;
  options.custom_op_libraries = custom_op_libraries;
  options.require_providers = require_providers;
  if (flags.count("--optimization")) {
    auto level = ParseOptimizationLevel(flags["--optimization"]);
    if (!level.ok()) return BadFlag(level.status());
    options.optimization_level = *level;
  }
  if (flags.count("--providers")) options.providers = SplitList(flags["--providers"]);
  if (flags.count("--optimized-model")) options.optimized_model_path = flags["--optimized-model"];
  if (flags.count("--threads")) {
    auto threads = ParseIntFlag("--threads", flags["--threads"], 0, kMaxThreads);
    if (!threads.ok()) return BadFlag(threads.status());
    options.intra_op_threads = static_cast<int>(*threads);
  }
  int repeat = 1;
  if (flags.count("--repeat")) {
    auto parsed = ParseIntFlag("--repeat", flags["--repeat"], 1, INT32_MAX);
    if (!parsed.ok()) return BadFlag(parsed.status());
    repeat = static_cast<int>(*parsed);
  }

  auto session = InferenceSession::Create(flags["--model"], options);
  if (!session.ok()) return Fail(std::string(session.status().message()));

  Feeds feeds;
  const auto& inputs = (*session)->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = flags["--inputs"] + "/input_" + std::to_string(i) + ".pb";
    if (!FileExists(path)) {
      if (inputs[i].kind == ValueInfo::Kind::kOptional) continue;
      return Fail("missing input file " + path + " for input '" + inputs[i].name + "'");
    }
    auto value = ReadValueFile(path, inputs[i].kind);
    if (!value.ok()) return Fail(std::string(value.status().message()));
    feeds.emplace_back(inputs[i].name, *std::move(value));
  }
  absl::StatusOr<std::vector<Value>> outputs;
  for (int i = 0; i < repeat; ++i) {
    outputs = (*session)->Run(RunOptions(), feeds, {});
    if (!outputs.ok()) return Fail(std::string(outputs.status().message()));
  }

  mkdir(flags["--outputs"].c_str(), 0755);
  const auto& infos = (*session)->outputs();
  for (size_t i = 0; i < outputs->size(); ++i) {
    std::string path = flags["--outputs"] + "/output_" + std::to_string(i) + ".pb";
    auto status = WriteValueFile(path, (*outputs)[i], infos[i].kind, infos[i].name);
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  return 0;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

absl::StatusOr<int64_t> ParseIntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    return absl::InvalidArgumentError(flag + " expects an integer from " + std::to_string(min) + " to " +
                                      std::to_string(max) + ", received '" + text + "'");
  }
  return value;
}

}  // namespace onyx::cli
