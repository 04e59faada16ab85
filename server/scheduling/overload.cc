#include "server/scheduling/overload.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace onyx::server {
namespace {

constexpr absl::string_view kReasonUrl = "type.onyx.dev/onyx.RejectionReason";
constexpr absl::string_view kRetryUrl = "type.onyx.dev/onyx.RetryAfterMs";

constexpr std::array<absl::string_view, kRejectionReasonCount> kNames = {
    "queue_full",        "model_inflight_bytes", "server_inflight_bytes", "deadline_on_arrival",
    "deadline_in_queue", "deadline_before_run",  "stream_buffer_full",
};

}  // namespace

absl::string_view RejectionReasonName(RejectionReason reason) {
  return kNames[static_cast<size_t>(reason)];
}

absl::Status Rejected(absl::Status status, RejectionReason reason, absl::Duration retry_after) {
  status.SetPayload(kReasonUrl, absl::Cord(RejectionReasonName(reason)));
  if (retry_after > absl::ZeroDuration()) {
    const int64_t ms = std::max<int64_t>(
        1, absl::ToInt64Milliseconds(absl::Ceil(retry_after, absl::Milliseconds(1))));
    status.SetPayload(kRetryUrl, absl::Cord(std::to_string(ms)));
  }
  return status;
}

std::optional<RejectionReason> RejectionReasonOf(const absl::Status& status) {
  auto payload = status.GetPayload(kReasonUrl);
  if (!payload) return std::nullopt;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (*payload == kNames[i]) return static_cast<RejectionReason>(i);
  }
  return std::nullopt;
}

std::optional<absl::Duration> RetryAfterOf(const absl::Status& status) {
  auto payload = status.GetPayload(kRetryUrl);
  int64_t ms = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &ms)) return std::nullopt;
  return absl::Milliseconds(ms);
}

}  // namespace onyx::server
