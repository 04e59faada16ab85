#include "server/grpc/status_util.h"

#include <new>
#include <stdexcept>

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

TEST(StatusUtilTest, KeepsCodeAndMessage) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const struct {
    absl::Status in;
    grpc::StatusCode code;
  } cases[] = {
      {absl::NotFoundError("m"), grpc::StatusCode::NOT_FOUND},
      {absl::InvalidArgumentError("m"), grpc::StatusCode::INVALID_ARGUMENT},
      {absl::ResourceExhaustedError("m"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::UnavailableError("m"), grpc::StatusCode::UNAVAILABLE},
      {absl::UnimplementedError("m"), grpc::StatusCode::UNIMPLEMENTED},
      {absl::InternalError("m"), grpc::StatusCode::INTERNAL},
      {absl::CancelledError("m"), grpc::StatusCode::CANCELLED},
      {absl::DeadlineExceededError("m"), grpc::StatusCode::DEADLINE_EXCEEDED},
  };
  for (const auto& c : cases) {
    grpc::Status s = ToGrpcStatus(c.in);
    EXPECT_EQ(s.error_code(), c.code) << c.in;
    EXPECT_EQ(s.error_message(), "m");
  }
}

TEST(StatusFromExceptionsTest, TurnsThrowsIntoStatusesNamingTheWork) {
  EXPECT_TRUE(StatusFromExceptions("work", [] { return absl::OkStatus(); }).ok());
  EXPECT_EQ(StatusFromExceptions("work", [] { return absl::NotFoundError("x"); }),
            absl::NotFoundError("x"));
  const absl::Status oom = StatusFromExceptions("decoding the request",
                                                []() -> absl::Status { throw std::bad_alloc(); });
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(), "decoding the request: out of memory");
  const absl::Status thrown = StatusFromExceptions(
      "writing the response", []() -> absl::Status { throw std::length_error("basic_string"); });
  EXPECT_EQ(thrown.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(thrown.message(), "writing the response failed: basic_string");
  const absl::Status odd = StatusFromExceptions("work", []() -> absl::Status { throw 7; });
  EXPECT_EQ(odd.code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace onyx::server
