#include "server/memory/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::HasSubstr;

class SharedMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = "/onyx_shm_test_" + std::to_string(getpid());
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 4096), 0);
    mapping_ =
        static_cast<uint8_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    ASSERT_NE(mapping_, MAP_FAILED);
  }
  void TearDown() override {
    munmap(mapping_, 4096);
    shm_unlink(key_.c_str());
  }
  std::string key_;
  uint8_t* mapping_ = nullptr;
};

TEST_F(SharedMemoryTest, SliceSeesTheClientsBytesAtTheOffset) {
  std::memcpy(mapping_ + 100, "hello", 5);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", key_, 96, 64).ok());
  auto region = registry.Get("r");
  ASSERT_TRUE(region.ok()) << region.status();
  auto bytes = (*region)->Slice(4, 5);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "hello");
  // Writes land in the client's mapping.
  auto out = (*region)->Slice(0, 2);
  ASSERT_TRUE(out.ok());
  (*out)[0] = 'x';
  EXPECT_EQ(mapping_[96], 'x');
}

TEST_F(SharedMemoryTest, CopiesSurviveTheOwnerTruncatingTheObject) {
  std::memcpy(mapping_ + 8, "abcd", 4);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", key_, 0, 4096).ok());
  auto region = registry.Get("r");
  ASSERT_TRUE(region.ok());
  char got[4] = {};
  ASSERT_TRUE((*region)->ReadInto(8, 4, got).ok());
  EXPECT_EQ(std::string(got, 4), "abcd");
  ASSERT_TRUE((*region)->WriteFrom(16, "wxyz", 4).ok());
  EXPECT_EQ(std::memcmp(mapping_ + 16, "wxyz", 4), 0);
  // The owner shrinks the object: its pages are gone from every mapping.
  const int fd = shm_open(key_.c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 0), 0);
  close(fd);
  absl::Status read = (*region)->ReadInto(8, 4, got);
  EXPECT_EQ(read.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.message(), HasSubstr("region 'r': bytes [8, 12) are gone"));
  absl::Status written = (*region)->WriteFrom(0, "wxyz", 4);
  EXPECT_EQ(written.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(written.message(), HasSubstr("truncated after it was registered"));
  // Range checks still come first.
  EXPECT_THAT((*region)->ReadInto(4090, 16, got).message(), HasSubstr("exceed its byte_size 4096"));
}

TEST_F(SharedMemoryTest, SliceOutsideTheRegionIsInvalid) {
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", key_, 0, 64).ok());
  auto region = registry.Get("r");
  ASSERT_TRUE(region.ok());
  EXPECT_EQ((*region)->Slice(60, 8).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*region)->Slice(65, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*region)->Slice(0, 64).ok());
}

TEST_F(SharedMemoryTest, RegistrationErrors) {
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", key_.substr(1), 0, 16).ok());  // leading '/' optional
  EXPECT_EQ(registry.Register("r", key_, 0, 16).code(), absl::StatusCode::kAlreadyExists);
  absl::Status missing = registry.Register("m", "/onyx_no_such_key", 0, 16);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("onyx_no_such_key"));
  EXPECT_EQ(registry.Register("big", key_, 4000, 200).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SharedMemoryTest, StatusAndUnregister) {
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("b", key_, 0, 16).ok());
  ASSERT_TRUE(registry.Register("a", key_, 16, 32).ok());
  auto all = registry.Status("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "a");
  EXPECT_EQ((*all)[0].offset, 16u);
  EXPECT_EQ(registry.Status("zz").status().code(), absl::StatusCode::kNotFound);
  auto held = registry.Get("a");
  ASSERT_TRUE(registry.Unregister("a").ok());
  EXPECT_EQ(registry.Get("a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*held)->Slice(0, 32).ok());  // still mapped while held
  EXPECT_EQ(registry.Unregister("a").code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(registry.Unregister("").ok());
  EXPECT_TRUE(registry.Status("")->empty());
}

}  // namespace
}  // namespace onyx::server
