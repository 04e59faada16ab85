#include "loadtest/channels.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace onyx::load {

absl::StatusOr<std::unique_ptr<ChannelPool>> ChannelPool::Create(const std::vector<std::string>& targets,
                                                                 int connections, double connect_timeout_s) {
  std::unique_ptr<ChannelPool> pool(new ChannelPool());
  const int n = std::max<int>(connections, static_cast<int>(targets.size()));
  const auto deadline =
      std::chrono::system_clock::now() + std::chrono::microseconds(static_cast<int64_t>(connect_timeout_s * 1e6));
  for (int i = 0; i < n; ++i) {
    const std::string& target = targets[i % targets.size()];
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("onyx_load.connection", i);  // distinct arguments: never a shared channel
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    pool->targets_.push_back(target);
    pool->channels_.push_back(channel);
    pool->generic_.push_back(std::make_unique<grpc::GenericStub>(channel));
    pool->typed_.push_back(inference::GRPCInferenceService::NewStub(channel));
  }
  for (int i = 0; i < n; ++i) {
    if (!pool->channels_[i]->WaitForConnected(deadline)) {
      return absl::UnavailableError(absl::StrCat("cannot connect to ", pool->targets_[i], " within ", connect_timeout_s,
                                                 "s (connection ", i + 1, " of ", n, ")"));
    }
  }
  return pool;
}

std::vector<int> ChannelPool::OnePerTarget() const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    bool seen = false;
    for (int j : out) seen = seen || targets_[j] == targets_[i];
    if (!seen) out.push_back(i);
  }
  return out;
}

}  // namespace onyx::load
