#include "server/grpc/transport_limits.h"

#include <climits>
#include <map>

#include "gmock/gmock.h"
#include "grpc/grpc.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

std::map<std::string, int> AsMap(const TransportConfig& limits) {
  std::map<std::string, int> args;
  for (const auto& [name, value] : TransportChannelArguments(limits)) {
    EXPECT_TRUE(args.emplace(name, value).second) << name << " set twice";
  }
  return args;
}

TEST(TransportChannelArgumentsTest, DefaultsInGrpcUnits) {
  const std::map<std::string, int> args = AsMap(TransportConfig{});
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONCURRENT_STREAMS), 256);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_METADATA_SIZE), 16384);
  EXPECT_EQ(args.at(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS), 10000);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_IDLE_MS), 600000);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_AGE_MS), INT_MAX);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS), 30000);
  EXPECT_EQ(args.at(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS), 1);
  EXPECT_EQ(args.at(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS), 10000);
  EXPECT_EQ(args.at(GRPC_ARG_HTTP2_MAX_PING_STRIKES), 2);
}

TEST(TransportChannelArgumentsTest, ZeroIdleAndAgeMeanNever) {
  TransportConfig limits;
  limits.max_connection_idle_seconds = 0;
  limits.max_connection_age_seconds = 0;
  limits.max_connection_age_grace_seconds = 0;
  const std::map<std::string, int> args = AsMap(limits);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_IDLE_MS), INT_MAX);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_AGE_MS), INT_MAX);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS), INT_MAX);
}

TEST(TransportChannelArgumentsTest, LargestAcceptedSecondsFitAnInt) {
  TransportConfig limits;
  limits.handshake_timeout_seconds = kMaxTransportSeconds;
  limits.max_connection_age_seconds = kMaxTransportSeconds;
  const std::map<std::string, int> args = AsMap(limits);
  EXPECT_EQ(args.at(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS), 2147483000);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_CONNECTION_AGE_MS), 2147483000);
}

}  // namespace
}  // namespace onyx::server
