#include "server/models/repository_layout.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A scratch directory per test and process holding `repo/` (the root) and
// `outside/` beside it.
class RepositoryLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    base_ = fs::path(::testing::TempDir()) /
            absl::StrCat("repository_layout_test_", info->name(), "_", getpid());
    fs::remove_all(base_);
    root_ = base_ / "repo";
    outside_ = base_ / "outside";
    fs::create_directories(root_);
    fs::create_directories(outside_);
  }
  void TearDown() override { fs::remove_all(base_); }

  // The versions of `resolution` with their model paths or reasons, one
  // string each: "3 <path>" or "9 ! <message>".
  static std::vector<std::string> Lines(const VersionResolution& resolution) {
    std::vector<std::string> lines;
    for (const ResolvedVersion& v : *resolution.versions) {
      lines.push_back(v.model_path.ok()
                          ? absl::StrCat(v.version, " ", *v.model_path)
                          : absl::StrCat(v.version, " ! ", v.model_path.status().message()));
    }
    return lines;
  }
  VersionSource Source(const std::string& model) const {
    return VersionSource{model, root_ / model, root_, (root_ / model).string()};
  }
  static VersionPolicy Latest(int64_t n) {
    VersionPolicy policy;
    policy.latest = n;
    return policy;
  }

  fs::path base_;
  fs::path root_;
  fs::path outside_;
};

TEST(ParseModelVersionTest, OnlyCanonicalPositiveInt64) {
  EXPECT_EQ(*ParseModelVersion("1"), 1);
  EXPECT_EQ(*ParseModelVersion("10"), 10);
  EXPECT_EQ(*ParseModelVersion("9223372036854775807"), 9223372036854775807);
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"01", "'01' has a leading zero (expected '1')"},
           Case{"0010", "'0010' has a leading zero (expected '10')"},
           Case{"0", "'0' is 0, not a version (versions start at 1)"},
           Case{"000", "'000' is 0, not a version (versions start at 1)"},
           Case{"9223372036854775808",
                "'9223372036854775808' is larger than the largest version, 9223372036854775807"},
           Case{"99999999999999999999", "'99999999999999999999' is larger than the largest"},
           Case{"+1", "'+1' is not a decimal number (expected digits only)"},
           Case{"-1", "'-1' is not a decimal number"},
           Case{" 1", "' 1' is not a decimal number"},
           Case{"", "'' is not a decimal number"},
           Case{"1e3", "'1e3' is not a decimal number"},
       }) {
    absl::StatusOr<int64_t> version = ParseModelVersion(c.text);
    EXPECT_EQ(version.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(version.status().message(), HasSubstr(c.message)) << c.text;
  }
}

TEST_F(RepositoryLayoutTest, ModelNamesMustBePlainChildrenOfTheRoot) {
  fs::create_directories(root_ / "mlp");
  fs::create_directories(root_ / "a" / "b");
  fs::create_directory_symlink(root_ / "mlp", root_ / "alias");     // a sibling: fine
  fs::create_directory_symlink(root_ / "a" / "b", root_ / "deep");  // below a sibling
  fs::create_directory_symlink(outside_, root_ / "escape");
  for (const char* name : {"mlp", "not_there_yet", "alias"}) {
    EXPECT_TRUE(CheckModelName(root_, name).ok()) << name;
  }
  const std::string with_nul("a\0b", 3);
  for (const std::string& name : std::vector<std::string>{
           "", ".", "..", ".hidden", "a/b", "../repo", "a\\b", with_nul, "deep", "escape"}) {
    absl::Status status = CheckModelName(root_, name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(status.message(), "model name '" + name + "' is outside the repository");
  }
  // A root spelled with a trailing slash holds the same names.
  EXPECT_TRUE(CheckModelName(root_.string() + "/", "mlp").ok());
}

TEST_F(RepositoryLayoutTest, ContainmentFollowsSymlinksAndComparesWholeComponents) {
  const fs::path real_root = fs::canonical(root_);
  const fs::path real_outside = fs::canonical(outside_);
  fs::create_directories(root_ / "m" / "1");
  EXPECT_TRUE(CheckInsideRoot(root_ / "m" / "1", root_, "x").ok());
  EXPECT_TRUE(CheckInsideRoot(root_ / "m" / "1" / "missing.onnx", root_, "x").ok());
  EXPECT_TRUE(CheckInsideRoot(root_ / "m" / "1", root_.string() + "/", "x").ok());
  EXPECT_TRUE(CheckInsideRoot(root_ / "m" / ".." / "m", root_, "x").ok());

  fs::create_directory_symlink(outside_, root_ / "m" / "2");
  absl::Status link = CheckInsideRoot(root_ / "m" / "2", root_, "model 'm' version 2: dir");
  EXPECT_EQ(link.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(link.message(),
            absl::StrCat("model 'm' version 2: dir ", (root_ / "m" / "2").string(), " resolves to ",
                         real_outside.string(), ", outside the repository root ",
                         real_root.string(), " (refused)"));
  // "repo2" starts with "repo" but is not inside it.
  fs::create_directories(base_ / "repo2");
  absl::Status sibling = CheckInsideRoot(base_ / "repo2", root_, "what");
  EXPECT_EQ(sibling.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(sibling.message(), HasSubstr("outside the repository root"));
  EXPECT_EQ(CheckInsideRoot(root_ / "..", root_, "what").code(), absl::StatusCode::kUnavailable);
}

TEST_F(RepositoryLayoutTest, FileOverrideKeysAreVersionSlashModelOnnx) {
  EXPECT_EQ(*FileOverrideVersion("3/model.onnx"), 3);
  EXPECT_EQ(*FileOverrideVersion("12/model.onnx"), 12);
  for (const char* key : {"model.onnx", "../model.onnx", "/3/model.onnx", "3/other.onnx",
                          "3/model.onnx/x", "03/model.onnx", "0/model.onnx", "x/model.onnx"}) {
    absl::StatusOr<int64_t> version = FileOverrideVersion(key);
    EXPECT_EQ(version.status().code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(version.status().message(),
                HasSubstr(absl::StrCat("RepositoryModelLoad parameter 'file:", key,
                                       "': expected 'file:<version>/model.onnx'")))
        << key;
  }
  EXPECT_THAT(FileOverrideVersion("03/model.onnx").status().message(),
              HasSubstr("'03' has a leading zero"));
}

TEST_F(RepositoryLayoutTest, PoliciesPickFromTheVersionDirectories) {
  for (int v : {1, 2, 10}) WriteFile(root_ / "m" / std::to_string(v) / "model.onnx", "x");
  const std::string dir = (root_ / "m").string();

  VersionResolution latest = ResolveVersions(Source("m"), VersionPolicy{});
  ASSERT_TRUE(latest.versions.ok()) << latest.versions.status();
  EXPECT_THAT(Lines(latest), ElementsAre("10 " + dir + "/10/model.onnx"));
  EXPECT_THAT(latest.ignored, IsEmpty());

  EXPECT_THAT(Lines(ResolveVersions(Source("m"), Latest(2))),
              ElementsAre("2 " + dir + "/2/model.onnx", "10 " + dir + "/10/model.onnx"));
  EXPECT_THAT(Lines(ResolveVersions(Source("m"), Latest(5))),
              ElementsAre("1 " + dir + "/1/model.onnx", "2 " + dir + "/2/model.onnx",
                          "10 " + dir + "/10/model.onnx"));

  VersionPolicy all;
  all.kind = VersionPolicy::Kind::kAll;
  EXPECT_EQ(Lines(ResolveVersions(Source("m"), all)).size(), 3u);

  // A listed version need not exist; it is then unavailable with the reason.
  VersionPolicy specific;
  specific.kind = VersionPolicy::Kind::kSpecific;
  specific.specific = {2, 9};
  EXPECT_THAT(Lines(ResolveVersions(Source("m"), specific)),
              ElementsAre("2 " + dir + "/2/model.onnx",
                          "9 ! model 'm' version 9: version_policy selects it but there is no "
                          "version directory " +
                              dir + "/9"));
}

TEST_F(RepositoryLayoutTest, OnlyCanonicalDirectoriesAreVersionsAndTheRestAreNamed) {
  WriteFile(root_ / "m" / "3" / "model.onnx", "x");
  for (const char* name : {"07", "0", "99999999999999999999"}) {
    fs::create_directories(root_ / "m" / name);
  }
  fs::create_directories(root_ / "m" / "latest");  // not all digits: not a version
  WriteFile(root_ / "m" / "8", "a file, not a directory");
  VersionPolicy all;
  all.kind = VersionPolicy::Kind::kAll;
  VersionResolution resolution = ResolveVersions(Source("m"), all);
  EXPECT_THAT(Lines(resolution), ElementsAre("3 " + (root_ / "m" / "3" / "model.onnx").string()));
  const std::string dir = (root_ / "m").string();
  EXPECT_THAT(resolution.ignored,
              ElementsAre("ignoring version directory " + dir +
                              "/0: '0' is 0, not a version "
                              "(versions start at 1)",
                          "ignoring version directory " + dir +
                              "/07: '07' has a leading zero (expected '7')",
                          "ignoring version directory " + dir +
                              "/99999999999999999999: '99999999999999999999' is larger than the "
                              "largest version, 9223372036854775807"));
}

TEST_F(RepositoryLayoutTest, NoVersionIsOneReasonNamingWhere) {
  fs::create_directories(root_ / "m" / "01");
  VersionResolution resolution = ResolveVersions(Source("m"), VersionPolicy{});
  EXPECT_EQ(resolution.versions.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(resolution.versions.status().message(),
            "model 'm': no numeric version directory in " + (root_ / "m").string());
  EXPECT_EQ(resolution.ignored.size(), 1u);  // still named for the log

  VersionSource files{"n", root_ / "absent", root_ / "absent", "the load's files"};
  EXPECT_EQ(ResolveVersions(files, VersionPolicy{}).versions.status().message(),
            "model 'n': no numeric version directory in the load's files");
}

TEST_F(RepositoryLayoutTest, VersionsResolvingOutsideTheRootAreRefusedOneByOne) {
  const fs::path real_root = fs::canonical(root_);
  const fs::path real_outside = fs::canonical(outside_);
  WriteFile(root_ / "m" / "1" / "model.onnx", "x");
  WriteFile(outside_ / "4" / "model.onnx", "x");
  WriteFile(outside_ / "five.onnx", "x");
  fs::create_directory_symlink(outside_ / "4", root_ / "m" / "4");
  fs::create_directories(root_ / "m" / "5");
  fs::create_symlink(outside_ / "five.onnx", root_ / "m" / "5" / "model.onnx");
  fs::create_directory_symlink(root_ / "m" / "1", root_ / "m" / "6");  // stays inside
  VersionPolicy all;
  all.kind = VersionPolicy::Kind::kAll;
  const std::string dir = (root_ / "m").string();
  EXPECT_THAT(
      Lines(ResolveVersions(Source("m"), all)),
      ElementsAre("1 " + dir + "/1/model.onnx",
                  absl::StrCat("4 ! model 'm' version 4: version directory ", dir,
                               "/4 resolves to ", (real_outside / "4").string(),
                               ", outside the repository root ", real_root.string(), " (refused)"),
                  absl::StrCat("5 ! model 'm' version 5: model file ", dir,
                               "/5/model.onnx resolves to ", (real_outside / "five.onnx").string(),
                               ", outside the repository root ", real_root.string(), " (refused)"),
                  "6 " + dir + "/6/model.onnx"));

  // The load's private directory is its own root: a version linking back
  // into the repository is outside it.
  const fs::path files = base_ / "files";
  WriteFile(files / "2" / "model.onnx", "x");
  fs::create_directory_symlink(root_ / "m" / "1", files / "3");
  VersionSource source{"m", files, files, "the load's files"};
  std::vector<std::string> lines = Lines(ResolveVersions(source, all));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "2 " + (files / "2" / "model.onnx").string());
  EXPECT_THAT(lines[1], HasSubstr("3 ! model 'm' version 3: version directory "));
  EXPECT_THAT(lines[1], HasSubstr(", outside the repository root " + fs::canonical(files).string() +
                                  " (refused)"));
}

}  // namespace
}  // namespace onyx::server
