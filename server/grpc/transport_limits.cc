#include "server/grpc/transport_limits.h"

#include <climits>
#include <cstdint>

#include "grpc/grpc.h"

namespace onyx::server {
namespace {

int Milliseconds(int64_t seconds) { return static_cast<int>(seconds * 1000); }

int MillisecondsOrNever(int64_t seconds) { return seconds == 0 ? INT_MAX : Milliseconds(seconds); }

}  // namespace

std::vector<std::pair<std::string, int>> TransportChannelArguments(const TransportConfig& limits) {
  return {
      {GRPC_ARG_MAX_CONCURRENT_STREAMS, static_cast<int>(limits.max_concurrent_streams)},
      {GRPC_ARG_MAX_METADATA_SIZE, static_cast<int>(limits.max_metadata_bytes)},
      {GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, Milliseconds(limits.handshake_timeout_seconds)},
      {GRPC_ARG_MAX_CONNECTION_IDLE_MS, MillisecondsOrNever(limits.max_connection_idle_seconds)},
      {GRPC_ARG_MAX_CONNECTION_AGE_MS, MillisecondsOrNever(limits.max_connection_age_seconds)},
      {GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
       MillisecondsOrNever(limits.max_connection_age_grace_seconds)},
      // The interval applies whether or not calls are open: clients that keep
      // idle connections alive with pings are fine, floods are not.
      {GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1},
      {GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
       Milliseconds(limits.min_ping_interval_seconds)},
      {GRPC_ARG_HTTP2_MAX_PING_STRIKES, static_cast<int>(limits.max_ping_strikes)},
  };
}

}  // namespace onyx::server
