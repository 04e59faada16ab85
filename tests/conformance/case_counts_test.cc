#include "tests/conformance/case_counts.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace onyx::conformance {
namespace {

// Names of their own: ctest runs expected_failures_test beside these.
std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/case_counts_" + name; }

TEST(CaseCountsTest, ParsesOpsCountsAndComments) {
  const std::string path = TempPath("counts.txt");
  std::ofstream(path) << "# header\n\nConv 7  # a comment\n  Abs\t2\nGelu (expanded) 3\n";
  auto counts = ReadCaseCounts(path);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(*counts, (CaseCounts{{"Abs", 2}, {"Conv", 7}, {"Gelu (expanded)", 3}}));
}

TEST(CaseCountsTest, RejectsMalformedLinesNamingThem) {
  for (const std::string bad : {"Conv\n", "Conv seven\n", "Conv 0\n", "3\n", "Conv -1\n", "Conv 3x\n"}) {
    const std::string path = TempPath("bad.txt");
    std::ofstream(path) << "Abs 1\n" << bad;
    auto counts = ReadCaseCounts(path);
    ASSERT_FALSE(counts.ok()) << bad;
    EXPECT_NE(std::string(counts.status().message()).find(":2:"), std::string::npos) << counts.status();
  }
  EXPECT_EQ(ReadCaseCounts(TempPath("missing.txt")).status().code(), absl::StatusCode::kNotFound);
}

TEST(CaseCountsTest, WrittenCountsReadBack) {
  const std::string path = TempPath("out.txt");
  const CaseCounts counts = {{"Tile", 2}, {"Add", 5}, {"Add (expanded)", 1}};
  ASSERT_TRUE(WriteCaseCounts(path, counts).ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_NE(text.str().find("Add 5\nAdd (expanded) 1\nTile 2\n"), std::string::npos) << text.str();
  auto read = ReadCaseCounts(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, counts);
}

TEST(CaseCountsTest, NamesEveryOpBelowItsMinimumIncludingMissingOnes) {
  const CaseCounts minimum = {{"Add", 3}, {"Conv", 7}, {"Tile", 2}};
  const CaseCounts counted = {{"Add", 3}, {"Conv", 6}, {"Relu", 1}};
  EXPECT_EQ(CasesBelowMinimum(counted, minimum),
            (std::vector<std::string>{"Conv: 6 cases, want at least 7", "Tile: 0 cases, want at least 2"}));
  EXPECT_TRUE(CasesBelowMinimum({{"Add", 4}, {"Conv", 7}, {"Tile", 2}}, minimum).empty());
}

}  // namespace
}  // namespace onyx::conformance
