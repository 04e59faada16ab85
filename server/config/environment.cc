#include "server/config/environment.h"

#include <cstdlib>

#include "onyx/status_macros.h"

namespace onyx::server {

std::optional<std::string> ProcessEnvironment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<ServerConfig> DefaultsFromEnvironment(const EnvironmentLookup& lookup) {
  ServerConfig config;
  if (std::optional<std::string> grpc = lookup("ONYX_GRPC_ADDRESS")) {
    RETURN_IF_ERROR(ValidateAddress("ONYX_GRPC_ADDRESS", *grpc));
    config.grpc_address = *grpc;
  }
  if (std::optional<std::string> metrics = lookup("ONYX_METRICS_ADDRESS")) {
    // Empty disables the listener, as --metrics-address '' does.
    if (!metrics->empty()) RETURN_IF_ERROR(ValidateAddress("ONYX_METRICS_ADDRESS", *metrics));
    config.metrics_address = *metrics;
  }
  return config;
}

const char* EnvironmentUsage() {
  return "environment:\n"
         "  ONYX_GRPC_ADDRESS          replaces the default of --grpc-address\n"
         "  ONYX_METRICS_ADDRESS       replaces the default of --metrics-address ('' disables)\n"
         "  A --config file or a flag that sets the address wins over the variable.\n";
}

}  // namespace onyx::server
