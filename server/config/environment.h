// Environment variables that replace onyxd's built-in defaults.
//
//   ONYX_GRPC_ADDRESS     the default of --grpc-address (grpc_address)
//   ONYX_METRICS_ADDRESS  the default of --metrics-address (metrics_address); '' disables
//
// A container image sets its listen addresses this way: an image's command
// line is replaced by whatever flags `docker run IMAGE --flag ...` appends, its
// environment is not. A --config file or a flag that sets the same setting
// still wins, so an explicit configuration never loses to an image default.
// Values follow the flags' rules (HOST:PORT, port in [0, 65535]).
// Pure functions of the lookup: thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "server/config/server_config.h"

namespace onyx::server {

// Returns the variable's value, or nullopt when it is not set.
using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;

// The process environment (getenv).
std::optional<std::string> ProcessEnvironment(const char* name);

// ServerConfig's defaults with the variables above applied. INVALID_ARGUMENT
// naming the variable, what it expects and the value received for a bad one.
absl::StatusOr<ServerConfig> DefaultsFromEnvironment(const EnvironmentLookup& lookup);

// The --help paragraph that lists the variables.
const char* EnvironmentUsage();

}  // namespace onyx::server
