#include <unistd.h>

#include "server/models/model_repository.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A repository whose models all fail, each for a different reason; none of it
// needs a working graph, so the test exercises only the repository's handling.
class ModelRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs each test in its own process, possibly at the same time: one
    // directory per test and process.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) /
            ("model_repository_test_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "no_versions" / "latest");
    WriteFile(root_ / "junk" / "2" / "model.onnx", "not a model");
    fs::create_directories(root_ / "junk" / "10");  // highest version, no model.onnx
    WriteFile(root_ / "bad_config" / "config.yaml", "max_batch_size: lots\n");
    WriteFile(root_ / "bad_config" / "1" / "model.onnx", "not a model");
    WriteFile(root_ / "stray_file", "ignored");
    fs::create_directories(root_ / ".hidden" / "1");
    ModelRepository::Options options;
    options.root = root_.string();
    auto repository = ModelRepository::Create(options);
    ASSERT_TRUE(repository.ok()) << repository.status();
    repository_ = std::move(*repository);
  }
  void TearDown() override {
    repository_.reset();
    fs::remove_all(root_);
  }

  fs::path root_;
  std::unique_ptr<ModelRepository> repository_;
};

TEST_F(ModelRepositoryTest, MissingRootIsNotFound) {
  ModelRepository::Options options;
  options.root = (root_ / "absent").string();
  EXPECT_EQ(ModelRepository::Create(options).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelRepositoryTest, FailedModelsAreUnavailableWithTheirReason) {
  repository_->LoadAll();
  std::vector<ModelStatus> index = repository_->Index();
  ASSERT_EQ(index.size(), 3u);  // sorted; files and hidden directories ignored
  EXPECT_EQ(index[0].name, "bad_config");
  EXPECT_EQ(index[0].version, "1");
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_THAT(index[0].reason, HasSubstr("config.yaml"));
  EXPECT_THAT(index[0].reason, HasSubstr("max_batch_size"));

  EXPECT_EQ(index[1].name, "junk");
  EXPECT_EQ(index[1].version, "10");  // the highest numeric directory is served
  EXPECT_EQ(index[1].state, ModelState::kUnavailable);
  EXPECT_THAT(index[1].reason, HasSubstr("model 'junk' version 10"));

  EXPECT_EQ(index[2].name, "no_versions");
  EXPECT_EQ(index[2].version, "");
  EXPECT_THAT(index[2].reason, HasSubstr("no numeric version directory"));
}

TEST_F(ModelRepositoryTest, LookupsSayWhy) {
  repository_->LoadAll();
  auto unknown = repository_->GetReady("nope", "");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  auto unavailable = repository_->GetReady("junk", "");
  EXPECT_EQ(unavailable.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(unavailable.status().message(), HasSubstr("UNAVAILABLE"));
  auto wrong_version = repository_->GetReady("junk", "2");
  EXPECT_EQ(wrong_version.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(wrong_version.status().message(), HasSubstr("served: '10'"));
  EXPECT_EQ(repository_->GetStatus("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(repository_->GetStatus("junk")->state, ModelState::kUnavailable);
}

TEST_F(ModelRepositoryTest, ExplicitModeListsWithoutLoading) {
  repository_->DiscoverOnly();
  absl::StatusOr<ModelStatus> junk = repository_->GetStatus("junk");
  ASSERT_TRUE(junk.ok());
  EXPECT_EQ(junk->state, ModelState::kUnavailable);
  EXPECT_THAT(junk->reason, HasSubstr("not loaded"));
}

TEST_F(ModelRepositoryTest, LoadRejectsNamesOutsideTheRepository) {
  fs::create_directories(root_.parent_path() / "outside_model" / "1");
  fs::create_symlink(root_.parent_path() / "outside_model", root_ / "link");
  for (const char* name : {"", "..", "../outside_model", "a/b", ".hidden", "link"}) {
    absl::Status status = repository_->Load(name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(status.message(), HasSubstr("outside the repository")) << name;
    EXPECT_EQ(repository_->Unload(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  fs::remove_all(root_.parent_path() / "outside_model");
}

TEST_F(ModelRepositoryTest, LoadAndUnloadOfUnknownModelsAreNotFound) {
  repository_->DiscoverOnly();
  EXPECT_EQ(repository_->Load("nope").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(repository_->Unload("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelRepositoryTest, FailedLoadLeavesTheModelUnavailableWithTheReason) {
  repository_->DiscoverOnly();
  absl::Status status = repository_->Load("bad_config");
  EXPECT_FALSE(status.ok());
  absl::StatusOr<ModelStatus> bad = repository_->GetStatus("bad_config");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->state, ModelState::kUnavailable);
  EXPECT_THAT(bad->reason, HasSubstr("max_batch_size"));
  // Unloading a model that is not loaded is fine.
  EXPECT_TRUE(repository_->Unload("bad_config").ok());
}

TEST(ModelStateTest, NamesMatchTheProtocol) {
  EXPECT_EQ(ModelStateName(ModelState::kReady), "READY");
  EXPECT_EQ(ModelStateName(ModelState::kUnavailable), "UNAVAILABLE");
  EXPECT_EQ(ModelStateName(ModelState::kLoading), "LOADING");
  EXPECT_EQ(ModelStateName(ModelState::kUnloading), "UNLOADING");
}

}  // namespace
}  // namespace onyx::server
