// The connections onyx-load sends on: --connections N channels spread over
// the --target addresses, each a truly separate TCP connection.
//
//   ASSIGN_OR_RETURN(auto pool, ChannelPool::Create(targets, 4, /*connect_timeout_s=*/10));
//   pool->generic(i)->PrepareUnaryCall(...);   // pre-serialised bytes
//   pool->typed(i)->ModelMetadata(...);         // set-up calls
//
// gRPC C++ lets channels with equal arguments share one subchannel, and so one
// TCP connection; every channel here gets its own subchannel pool
// (GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL) and a distinct argument, so N channels
// are N connections. HTTP proxies from the environment are ignored: the
// load goes straight to the target. Message size limits are lifted.
//
// Thread-safe after Create (stubs are).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpc_service.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace onyx::load {

class ChannelPool {
 public:
  // UNAVAILABLE naming the address when a channel does not connect within
  // connect_timeout_s.
  static absl::StatusOr<std::unique_ptr<ChannelPool>> Create(const std::vector<std::string>& targets, int connections,
                                                             double connect_timeout_s);

  int size() const { return static_cast<int>(channels_.size()); }
  const std::string& target(int i) const { return targets_[i]; }
  grpc::GenericStub* generic(int i) const { return generic_[i].get(); }
  inference::GRPCInferenceService::Stub* typed(int i) const { return typed_[i].get(); }
  // One channel index per distinct target (for per-replica set-up calls).
  std::vector<int> OnePerTarget() const;

 private:
  ChannelPool() = default;
  std::vector<std::string> targets_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<grpc::GenericStub>> generic_;
  std::vector<std::unique_ptr<inference::GRPCInferenceService::Stub>> typed_;
};

}  // namespace onyx::load
