#include "server/auth/token_file.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("token_file_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "tokens").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Replaces the file the way editors and Kubernetes do: a new inode renamed
  // over the old one, so the change is seen whatever the clock's resolution.
  void Write(const std::string& text) {
    const std::string tmp = path_ + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
    }
    fs::rename(tmp, path_);
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(TokenFileTest, OpenReadsTokens) {
  Write("# clients\nfirst-token\nsecond-token\n");
  auto file = TokenFile::Open(path_, "inference_token_file");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->tokens()->size(), 2u);
  EXPECT_TRUE((*file)->tokens()->Contains("second-token"));
}

TEST_F(TokenFileTest, OpenRefusesMissingBadOrEmptyFiles) {
  auto missing = TokenFile::Open(path_, "inference_token_file");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(),
              AllOf(HasSubstr("inference_token_file"), HasSubstr(path_)));

  Write("# nothing\n\n");
  auto empty = TokenFile::Open(path_, "control_token_file");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(),
              AllOf(HasSubstr("control_token_file"), HasSubstr("no token")));

  Write("ok-token\nnot a-token\n");
  auto bad = TokenFile::Open(path_, "control_token_file");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), AllOf(HasSubstr("control_token_file"), HasSubstr("line 2"),
                                            Not(HasSubstr("ok-token")), Not(HasSubstr("a-token"))));
}

TEST_F(TokenFileTest, ReloadAppliesAChangedFileOnce) {
  Write("old-token\n");
  auto file = TokenFile::Open(path_, "inference_token_file");
  ASSERT_TRUE(file.ok()) << file.status();
  std::shared_ptr<const TokenSet> before = (*file)->tokens();

  absl::StatusOr<bool> unchanged = (*file)->ReloadIfChanged();
  ASSERT_TRUE(unchanged.ok()) << unchanged.status();
  EXPECT_FALSE(*unchanged);

  Write("new-token\nanother-token\n");
  absl::StatusOr<bool> changed = (*file)->ReloadIfChanged();
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_FALSE((*file)->tokens()->Contains("old-token"));
  EXPECT_TRUE((*file)->tokens()->Contains("new-token"));
  EXPECT_TRUE(before->Contains("old-token"));  // an old snapshot stays valid

  absl::StatusOr<bool> again = (*file)->ReloadIfChanged();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST_F(TokenFileTest, BadOrMissingFileKeepsTokensAndIsReportedOnce) {
  Write("kept-token\n");
  auto file = TokenFile::Open(path_, "inference_token_file");
  ASSERT_TRUE(file.ok()) << file.status();

  Write("kept-token\nbroken token\n");
  absl::StatusOr<bool> bad = (*file)->ReloadIfChanged();
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              AllOf(HasSubstr("line 2"), Not(HasSubstr("kept-token")), Not(HasSubstr("broken"))));
  EXPECT_TRUE((*file)->tokens()->Contains("kept-token"));
  absl::StatusOr<bool> same_bad = (*file)->ReloadIfChanged();
  ASSERT_TRUE(same_bad.ok());
  EXPECT_FALSE(*same_bad);

  fs::remove(path_);
  EXPECT_FALSE((*file)->ReloadIfChanged().ok());
  absl::StatusOr<bool> still_missing = (*file)->ReloadIfChanged();
  ASSERT_TRUE(still_missing.ok());
  EXPECT_FALSE(*still_missing);
  EXPECT_TRUE((*file)->tokens()->Contains("kept-token"));

  Write("fixed-token\n");
  absl::StatusOr<bool> fixed = (*file)->ReloadIfChanged();
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_TRUE(*fixed);
  EXPECT_TRUE((*file)->tokens()->Contains("fixed-token"));
  EXPECT_FALSE((*file)->tokens()->Contains("kept-token"));
}

TEST_F(TokenFileTest, AFileEmptiedOfTokensRevokesThemAll) {
  Write("leaked-token\n");
  auto file = TokenFile::Open(path_, "control_token_file");
  ASSERT_TRUE(file.ok()) << file.status();
  Write("# revoked\n");
  absl::StatusOr<bool> changed = (*file)->ReloadIfChanged();
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE((*file)->tokens()->empty());
  EXPECT_FALSE((*file)->tokens()->Contains("leaked-token"));
}

}  // namespace
}  // namespace onyx::server
