// The gRPC channel arguments that put TransportConfig's HTTP/2 limits on the
// gRPC port (server/config/server_config.h explains each limit).
//
//   for (const auto& [name, value] : TransportChannelArguments(config.transport)) {
//     builder.AddChannelArgument(name, value);
//   }
//
// Pure function: thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "server/config/server_config.h"

namespace onyx::server {

// (GRPC_ARG_... name, value) pairs: seconds become milliseconds, and 0 ("never")
// for the idle and age limits becomes gRPC's own "never" (INT_MAX).
std::vector<std::pair<std::string, int>> TransportChannelArguments(const TransportConfig& limits);

}  // namespace onyx::server
