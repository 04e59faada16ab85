#include "tests/conformance/expected_failures.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace onyx::conformance {
namespace {

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string ReadText(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

TEST(ExpectedFailuresTest, ParsesNamesReasonsAndComments) {
  const std::string path = TempPath("list.txt");
  WriteText(path, "# header\n\ntest_abs  # UNIMPLEMENTED: no kernel # for Abs\n  test_acos\t\n");
  auto list = ReadFailureList(path);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at("test_abs"), "UNIMPLEMENTED: no kernel # for Abs");
  EXPECT_EQ(list->at("test_acos"), "");
}

TEST(ExpectedFailuresTest, RejectsTwoNamesOnALine) {
  const std::string path = TempPath("bad.txt");
  WriteText(path, "test_abs\ntest_a test_b  # x\n");
  auto list = ReadFailureList(path);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(std::string(list.status().message()).find(":2:"), std::string::npos);
  EXPECT_EQ(ReadFailureList(TempPath("missing.txt")).status().code(), absl::StatusCode::kNotFound);
}

TEST(ExpectedFailuresTest, WritesSortedShortenedOneLineReasons) {
  const std::string path = TempPath("out.txt");
  FailureList failures = {{"test_b", "run: line one\nline two"}, {"test_a", std::string(30, 'x')}, {"test_c", ""}};
  ASSERT_TRUE(WriteFailureList(path, failures, 10).ok());
  const std::string text = ReadText(path);
  EXPECT_NE(text.find("test_a  # xxxxxxx...\ntest_b  # run: li...\ntest_c\n"), std::string::npos) << text;
  auto round_trip = ReadFailureList(path);
  ASSERT_TRUE(round_trip.ok());
  EXPECT_EQ(round_trip->size(), 3u);
  EXPECT_EQ(round_trip->at("test_a"), "xxxxxxx...");
}

TEST(ExpectedFailuresTest, DiffFindsUnexpectedFailuresAndStaleEntries) {
  const FailureList list = {{"test_listed_fails", ""}, {"test_listed_passes", ""}, {"test_listed_not_run", ""}};
  const std::map<std::string, bool> passed = {
      {"test_listed_fails", false}, {"test_listed_passes", true}, {"test_new_failure", false}, {"test_ok", true}};
  const ListDiff diff = DiffWithList(passed, list);
  EXPECT_EQ(diff.unexpected_failures, std::vector<std::string>{"test_new_failure"});
  EXPECT_EQ(diff.stale_entries, std::vector<std::string>{"test_listed_passes"});
}

}  // namespace
}  // namespace onyx::conformance
