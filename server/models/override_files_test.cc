#include "server/models/override_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;

// Each test gets a temp dir of its own (TMPDIR), so directories of other
// processes on the machine are never touched.
class OverrideFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "override_files_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    tmp_ = pattern;
    old_tmpdir_ = getenv("TMPDIR") ? getenv("TMPDIR") : "";
    setenv("TMPDIR", tmp_.c_str(), 1);
  }
  void TearDown() override {
    if (old_tmpdir_.empty()) {
      unsetenv("TMPDIR");
    } else {
      setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    }
    fs::remove_all(tmp_);
  }
  int Entries() const {
    return static_cast<int>(std::distance(fs::directory_iterator(tmp_), fs::directory_iterator()));
  }
  fs::path tmp_;
  std::string old_tmpdir_;
};

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(OverrideFilesTest, WritesTheFilesAndRemovesThemWithTheLastHolder) {
  auto dir = WriteOverrideFiles({{"1/model.onnx", "abc"}, {"config.yaml", "max_batch_size: 0\n"}});
  ASSERT_TRUE(dir.ok()) << dir.status();
  const fs::path path = **dir;
  EXPECT_EQ(path.parent_path(), tmp_);
  EXPECT_EQ(path.filename().string().rfind("onyx-load-", 0), 0u);
  EXPECT_EQ(Read(path / "1" / "model.onnx"), "abc");
  EXPECT_EQ(Read(path / "config.yaml"), "max_batch_size: 0\n");
  auto copy = *dir;
  dir->reset();
  EXPECT_TRUE(fs::exists(path));
  copy.reset();
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(OverrideFilesTest, ADirectoryOfALiveHolderIsNotStale) {
  auto dir = WriteOverrideFiles({{"1/model.onnx", "abc"}});
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(RemoveStaleOverrideDirectories(), 0);
  EXPECT_TRUE(fs::exists(fs::path(**dir) / "1" / "model.onnx"));
}

TEST_F(OverrideFilesTest, TheDirectoriesOfAKilledProcessAreRemovedAndNothingElse) {
  // A child writes two directories and is killed with SIGKILL while holding them.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto a = WriteOverrideFiles({{"1/model.onnx", "a"}});
    auto b = WriteOverrideFiles({{"2/model.onnx", "b"}});
    const char ok = (a.ok() && b.ok()) ? '1' : '0';
    (void)!write(ready[1], &ok, 1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  // Beside them: a live directory of this process, and look-alikes that are not ours.
  auto mine = WriteOverrideFiles({{"1/model.onnx", "mine"}});
  ASSERT_TRUE(mine.ok());
  fs::create_directories(tmp_ / "onyx-load-nolock");
  fs::create_directories(tmp_ / "other-dir");
  EXPECT_EQ(Entries(), 5);
  EXPECT_EQ(RemoveStaleOverrideDirectories(), 0);  // the child still holds its locks

  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(RemoveStaleOverrideDirectories(), 2);
  EXPECT_EQ(Entries(), 3);
  EXPECT_TRUE(fs::exists(fs::path(**mine) / "1" / "model.onnx"));
  EXPECT_TRUE(fs::exists(tmp_ / "onyx-load-nolock"));
  EXPECT_TRUE(fs::exists(tmp_ / "other-dir"));
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace onyx::server
