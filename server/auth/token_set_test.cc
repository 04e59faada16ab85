#include "server/auth/token_set.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(TokenSetTest, ConstantTimeEqualsIsEquality) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  // A repetition of the shorter string must not pass for the longer one.
  EXPECT_FALSE(ConstantTimeEquals("abab", "ab"));
}

TEST(TokenSetTest, OneTokenPerLineCommentsAndBlankLinesIgnored) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse(
      "# inference clients\n"
      "\n"
      "  alpha-0123456789  \n"
      "\tbeta_9876543210\r\n"
      "   # indented comment\n"
      "alpha-0123456789\n",  // duplicate
      "tokens.txt");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 2u);
  EXPECT_TRUE(set->Contains("alpha-0123456789"));
  EXPECT_TRUE(set->Contains("beta_9876543210"));
  EXPECT_FALSE(set->Contains("# inference clients"));
  EXPECT_FALSE(set->Contains(""));
  EXPECT_FALSE(set->Contains("alpha-012345678"));
  EXPECT_FALSE(set->Contains("alpha-01234567890"));
}

TEST(TokenSetTest, OnlyCommentsIsAnEmptySet) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse("# none yet\n\n", "tokens.txt");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE(set->empty());
  EXPECT_FALSE(set->Contains(""));
}

TEST(TokenSetTest, BadLineNamesSourceAndLineButNotItsText) {
  absl::StatusOr<TokenSet> set =
      TokenSet::Parse("good-token\nsecret part-two\n", "/etc/onyx/inference.tokens");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(),
              AllOf(HasSubstr("/etc/onyx/inference.tokens"), HasSubstr("line 2"),
                    HasSubstr("column 7"), HasSubstr("0x20"), Not(HasSubstr("secret")),
                    Not(HasSubstr("part-two")), Not(HasSubstr("good-token"))));
}

}  // namespace
}  // namespace onyx::server
