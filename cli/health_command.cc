// onyx health: one grpc.health.v1 Check, with exit codes a container
// HEALTHCHECK or an exec probe reads.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "cli/commands.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "health.grpc.pb.h"

namespace onyx::cli {

const char kHealthHelp[] =
    "usage: onyx health [flags]\n"
    "\n"
    "Asks onyxd's grpc.health.v1 service once whether the server (or one model) is\n"
    "serving, and prints the answer (SERVING, NOT_SERVING).\n"
    "\n"
    "flags:\n"
    "  --address HOST:PORT   onyxd's gRPC address (default $ONYX_GRPC_ADDRESS, else\n"
    "                        127.0.0.1:8001); host 0.0.0.0 or [::] means this machine\n"
    "  --model NAME          ask about this model (SERVING once it is loaded and the\n"
    "                        server serves) instead of the whole server\n"
    "  --timeout SECONDS     give up after this long, e.g. 2 or 0.5 (default 5)\n"
    "\n"
    "Plaintext gRPC only, like Kubernetes' gRPC probe. Exit codes: 0 SERVING;\n"
    "1 NOT_SERVING, a model onyxd does not know, or any other answer; 2 bad flags;\n"
    "3 no answer: nothing listening, the connection failed, or the timeout passed.\n";

namespace {

constexpr int kServing = 0;
constexpr int kNotServing = 1;
constexpr int kBadFlags = 2;
constexpr int kNoAnswer = 3;
constexpr double kMaxTimeoutSeconds = 3600;

struct HealthFlags {
  std::string address;
  std::string model;
  double timeout_seconds = 5;
};

int BadFlag(const std::string& message) {
  std::fprintf(stderr, "onyx health: %s\n", message.c_str());
  return kBadFlags;
}

// "0.0.0.0:8001" (a listen address) → "127.0.0.1:8001" (where to connect).
std::string ConnectAddress(const std::string& address) {
  if (absl::StartsWith(address, "0.0.0.0:")) return "127.0.0.1" + address.substr(7);
  if (absl::StartsWith(address, "[::]:")) return "[::1]" + address.substr(4);
  return address;
}

bool ValidAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  int port = 0;
  return absl::SimpleAtoi(address.substr(colon + 1), &port) && port >= 1 && port <= 65535;
}

// Returns -1 when the flags are good, else the exit code (help printed, or bad flags).
int ParseHealthFlags(const std::vector<std::string>& args, HealthFlags* flags) {
  const char* env = std::getenv("ONYX_GRPC_ADDRESS");
  flags->address = env != nullptr && *env != '\0' ? env : "127.0.0.1:8001";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    if (name == "--help" || name == "-h") {
      std::fputs(kHealthHelp, stdout);
      return 0;
    }
    std::string value;
    bool has_value = false;
    if (const size_t eq = name.find('='); absl::StartsWith(name, "--") && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name != "--address" && name != "--model" && name != "--timeout") {
      return BadFlag((absl::StartsWith(name, "-") ? "unknown flag '" : "unexpected argument '") + name +
                     "' (see onyx health --help)");
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return BadFlag("missing value for flag '" + name + "'");
      value = args[++i];
    }
    if (name == "--address") {
      if (!ValidAddress(value)) {
        return BadFlag("--address expects HOST:PORT with a port from 1 to 65535, received '" + value + "'");
      }
      flags->address = value;
    } else if (name == "--model") {
      if (value.empty()) return BadFlag("--model expects a model name, received ''");
      flags->model = value;
    } else {
      double seconds = 0;
      if (!absl::SimpleAtod(value, &seconds) || !(seconds > 0) || seconds > kMaxTimeoutSeconds) {
        return BadFlag("--timeout expects seconds above 0 and at most 3600, received '" + value + "'");
      }
      flags->timeout_seconds = seconds;
    }
  }
  // A bad $ONYX_GRPC_ADDRESS is reported like a bad flag, naming the variable.
  if (!ValidAddress(flags->address)) {
    return BadFlag("ONYX_GRPC_ADDRESS expects HOST:PORT with a port from 1 to 65535, received '" + flags->address +
                   "'");
  }
  return -1;
}

}  // namespace

int HealthCommand(const std::vector<std::string>& args) {
  HealthFlags flags;
  if (int code = ParseHealthFlags(args, &flags); code >= 0) return code;

  const std::string target = ConnectAddress(flags.address);
  const std::string what = flags.model.empty() ? "onyxd at " + target : "model '" + flags.model + "' at " + target;
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(flags.timeout_seconds * 1e6)));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(flags.model);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);

  if (status.ok()) {
    const std::string name = grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
    std::printf("%s\n", name.c_str());
    if (response.status() == grpc::health::v1::HealthCheckResponse::SERVING) return kServing;
    std::fprintf(stderr, "onyx health: %s is %s\n", what.c_str(), name.c_str());
    return kNotServing;
  }
  const std::string message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      std::fprintf(stderr, "onyx health: no answer from %s: UNAVAILABLE: %s\n", target.c_str(), message.c_str());
      return kNoAnswer;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::fprintf(stderr, "onyx health: no answer from %s within %gs (--timeout)\n", target.c_str(),
                   flags.timeout_seconds);
      return kNoAnswer;
    case grpc::StatusCode::NOT_FOUND:
      std::printf("SERVICE_UNKNOWN\n");
      std::fprintf(stderr, "onyx health: %s: onyxd has no such model: %s\n", what.c_str(), message.c_str());
      return kNotServing;
    default:
      std::fprintf(stderr, "onyx health: %s answered error code %d: %s\n", what.c_str(),
                   static_cast<int>(status.error_code()), message.c_str());
      return kNotServing;
  }
}

}  // namespace onyx::cli
