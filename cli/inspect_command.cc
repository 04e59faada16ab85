#include <cstdio>
#include <map>
#include <string>

#include "cli/commands.h"
#include "onyx/session.h"

namespace onyx::cli {

const char kInspectHelp[] =
    "usage: onyx inspect MODEL.onnx [flags]\n"
    "\n"
    "Compiles the model as a session would and prints its inputs and outputs, the\n"
    "histogram of op types after graph rewriting, and the partition report (nodes per\n"
    "provider, partitions, Memcpy nodes, CPU-fallback nodes with the reason each fell back).\n"
    "\n"
    "flags:\n"
    "  --providers LIST         execution providers in priority order (default cpu)\n"
    "  --custom-op-library PATH a custom-operator library to load (repeatable)\n"
    "  --require-providers      fail (exit 1) when a listed provider is unavailable here\n"
    "  --max-cpu-fallback N     fail (exit 1) when more than N nodes fall back to CPU\n"
    "  --optimization LEVEL     disabled | basic | extended | all (default all)\n"
    "\n"
    "Exits 0 when the model compiles within the fallback limit, 1 otherwise, 2 for bad flags.\n";

namespace {

std::string Describe(const ValueInfo& v) {
  std::string kind = v.kind == ValueInfo::Kind::kSequence   ? "sequence<"
                     : v.kind == ValueInfo::Kind::kOptional ? "optional<"
                                                            : "";
  std::string text = v.name + ": " + kind + DataTypeName(v.type);
  if (v.has_shape) {
    text += " [";
    for (size_t i = 0; i < v.dims.size(); ++i) {
      if (i) text += ",";
      text += v.dims[i] >= 0 ? std::to_string(v.dims[i]) : (v.dim_params[i].empty() ? "?" : v.dim_params[i]);
    }
    text += "]";
  }
  if (!kind.empty()) text += ">";
  return text;
}

}  // namespace

int InspectCommand(const std::vector<std::string>& args) {
  std::string model;
  SessionOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kInspectHelp, stdout);
      return 0;
    }
    if (a == "--require-providers") {
      options.require_providers = true;
      continue;
    }
    if (a == "--providers" || a == "--max-cpu-fallback" || a == "--optimization" || a == "--custom-op-library") {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "onyx inspect: missing value for flag '%s'\n", a.c_str());
        return 2;
      }
      const std::string& value = args[++i];
      if (a == "--providers") {
        options.providers = SplitList(value);
      } else if (a == "--custom-op-library") {
        options.custom_op_libraries.push_back(value);
      } else if (a == "--max-cpu-fallback") {
        auto n = ParseIntFlag(a, value, 0, INT64_MAX);
        if (!n.ok()) {
          std::fprintf(stderr, "onyx inspect: %s\n", std::string(n.status().message()).c_str());
          return 2;
        }
        options.max_cpu_fallback_nodes = *n;
      } else {
        auto level = ParseOptimizationLevel(value);
        if (!level.ok()) {
          std::fprintf(stderr, "onyx inspect: %s\n", std::string(level.status().message()).c_str());
          return 2;
        }
        options.optimization_level = *level;
      }
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "onyx inspect: unknown flag '%s' (see onyx inspect --help)\n", a.c_str());
      return 2;
    }
    if (!model.empty()) {
      std::fprintf(stderr, "onyx inspect: more than one model given ('%s', '%s')\n", model.c_str(), a.c_str());
      return 2;
    }
    model = a;
  }
  if (model.empty()) {
    std::fprintf(stderr, "onyx inspect: no model given (see onyx inspect --help)\n");
    return 2;
  }
  auto session = InferenceSession::Create(model, options);
  if (!session.ok()) {
    std::string message(session.status().message());
    // The gate's report spans lines: print the reason line, then the report.
    std::fprintf(stderr, "onyx inspect: %s\n", message.c_str());
    return 1;
  }
  const InferenceSession& s = **session;
  std::printf("model: %s\n", model.c_str());
  std::printf("inputs:\n");
  for (const auto& v : s.inputs()) std::printf("  %s\n", Describe(v).c_str());
  std::printf("outputs:\n");
  for (const auto& v : s.outputs()) std::printf("  %s\n", Describe(v).c_str());
  std::printf("op histogram:\n");
  int64_t total = 0;
  for (const auto& [op, count] : s.op_histogram()) {
    std::printf("  %-28s %lld\n", op.c_str(), static_cast<long long>(count));
    total += count;
  }
  std::printf("  %-28s %lld\n", "(total)", static_cast<long long>(total));
  std::fputs(s.partition_report().ToString().c_str(), stdout);
  return 0;
}

}  // namespace onyx::cli
