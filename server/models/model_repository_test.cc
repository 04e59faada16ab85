#include <unistd.h>

#include "server/models/model_repository.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onyx/value_io.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "tests/util/model_builder.h"

namespace onyx::server {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
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
  EXPECT_EQ(index[0].version, "");  // an unreadable config.yaml fails the whole model
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
  EXPECT_THAT(wrong_version.status().message(), HasSubstr("versions: 10"));
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

// y = x * factor, x and y [batch, 4] float: each version answers differently.
std::string ScaleModel(float factor) {
  onyx::testing::ModelBuilder m(13);
  m.Input("x", onyx::DataType::kFloat, {-1, 4}).Output("y", onyx::DataType::kFloat, {-1, 4});
  m.Initializer("factor", onyx::testing::FloatTensor({1}, {factor}));
  m.Node("Mul", {"x", "factor"}, {"y"});
  return m.Serialize();
}

// y = 2 * x over [batch, length]: both dims symbolic ("d0", "d1").
std::string DoubleSequenceModel() {
  onyx::testing::ModelBuilder m(13);
  m.Input("x", onyx::DataType::kFloat, {-1, -1}).Output("y", onyx::DataType::kFloat, {-1, -1});
  m.Initializer("two", onyx::testing::FloatTensor({1}, {2}));
  m.Node("Mul", {"x", "two"}, {"y"});
  return m.Serialize();
}

// Runs `x` ([rows, cols]) through the model's scheduler; the output "y".
absl::StatusOr<std::vector<float>> Infer(const Model& model, int64_t rows, int64_t cols,
                                         const std::vector<float>& x) {
  auto request = std::make_unique<InferenceRequest>();
  request->inputs.emplace_back("x", onyx::Value(onyx::testing::FloatTensor({rows, cols}, x)));
  request->batch_size = rows;
  request->output_names = {"y"};
  absl::Notification done;
  absl::StatusOr<InferenceResult> result;
  absl::Status status =
      model.scheduler().Enqueue(std::move(request), [&](absl::StatusOr<InferenceResult> r) {
        result = std::move(r);
        done.Notify();
      });
  if (!status.ok()) return status;
  done.WaitForNotification();
  if (!result.ok()) return result.status();
  const onyx::Tensor& y = result->outputs.at(0);
  return std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements());
}

// A repository of one model, "scale", whose version v multiplies by v.
class VersionedRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ =
        fs::path(::testing::TempDir()) /
        ("versioned_repository_test_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(root_);
    for (int v : {1, 2, 3})
      WriteFile(root_ / "scale" / std::to_string(v) / "model.onnx", ScaleModel(v));
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
  void SetConfig(const std::string& yaml) { WriteFile(root_ / "scale" / "config.yaml", yaml); }
  std::vector<std::string> IndexLines() const {
    std::vector<std::string> lines;
    for (const ModelStatus& s : repository_->Index()) {
      lines.push_back(s.name + " " + s.version + " " + std::string(ModelStateName(s.state)));
    }
    return lines;
  }

  fs::path root_;
  std::unique_ptr<ModelRepository> repository_;
};

TEST_F(VersionedRepositoryTest, DefaultPolicyServesTheHighestVersionOnly) {
  repository_->LoadAll();
  EXPECT_THAT(IndexLines(), ElementsAre("scale 3 READY"));
  auto model = repository_->GetReady("scale", "");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->version(), 3);
  EXPECT_EQ(repository_->GetReady("scale", "1").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(VersionedRepositoryTest, LatestTwoServesBothWithTheirOwnAnswers) {
  SetConfig("version_policy: {latest: 2}\n");
  repository_->LoadAll();
  EXPECT_THAT(IndexLines(), ElementsAre("scale 2 READY", "scale 3 READY"));
  std::vector<std::shared_ptr<const Model>> loaded = repository_->LoadedModels();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0]->version(), 2);
  EXPECT_EQ(loaded[1]->version(), 3);
  EXPECT_EQ((*repository_->GetReady("scale", ""))->version(), 3);  // highest READY
  auto v2 = repository_->GetReady("scale", "2");
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_THAT(*Infer(**v2, 1, 4, {1, 2, 3, 4}), ElementsAre(2, 4, 6, 8));
  EXPECT_THAT(*Infer(**repository_->GetReady("scale", "3"), 1, 4, {1, 2, 3, 4}),
              ElementsAre(3, 6, 9, 12));
  auto v1 = repository_->GetReady("scale", "1");
  EXPECT_EQ(v1.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(v1.status().message(), HasSubstr("versions: 2, 3"));
  EXPECT_EQ(repository_->GetStatus("scale")->version, "3");
  std::vector<std::shared_ptr<const Model>> ready = repository_->ReadyModels("scale");
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0]->version(), 2);
  EXPECT_EQ(ready[1]->version(), 3);
  EXPECT_EQ(repository_->ReadyModels("").size(), 2u);
  EXPECT_TRUE(repository_->ReadyModels("nope").empty());
}

TEST_F(VersionedRepositoryTest, ReloadLoadsNewVersionsAndDrainsDroppedOnes) {
  repository_->LoadAll();
  std::shared_ptr<const Model> old = *repository_->GetReady("scale", "3");
  SetConfig("version_policy: {specific: [1, 2]}\n");
  ASSERT_TRUE(repository_->Load("scale").ok());
  EXPECT_THAT(IndexLines(), ElementsAre("scale 1 READY", "scale 2 READY"));
  EXPECT_EQ((*repository_->GetReady("scale", ""))->version(), 2);
  EXPECT_EQ(repository_->GetReady("scale", "3").status().code(), absl::StatusCode::kNotFound);
  // The dropped version was stopped: it refuses new work.
  EXPECT_EQ(Infer(*old, 1, 4, {1, 1, 1, 1}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(*Infer(**repository_->GetReady("scale", "1"), 1, 4, {1, 2, 3, 4}),
              ElementsAre(1, 2, 3, 4));
}

TEST_F(VersionedRepositoryTest, AFailingVersionIsUnavailableWhileTheOthersServe) {
  WriteFile(root_ / "scale" / "4" / "model.onnx", "not a model");
  SetConfig("version_policy: all\n");
  repository_->DiscoverOnly();
  absl::Status status = repository_->Load("scale");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("model 'scale' version 4"));
  EXPECT_THAT(IndexLines(), ElementsAre("scale 1 READY", "scale 2 READY", "scale 3 READY",
                                        "scale 4 UNAVAILABLE"));
  EXPECT_THAT(repository_->Index()[3].reason, HasSubstr("version 4"));
  EXPECT_EQ((*repository_->GetReady("scale", ""))->version(), 3);
  auto four = repository_->GetReady("scale", "4");
  EXPECT_EQ(four.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(four.status().message(), HasSubstr("version 4 is UNAVAILABLE"));
}

// Captures what the default logger writes while alive, one "[level] message" a line.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    sink->set_pattern("[%l] %v");
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(VersionedRepositoryTest, NonCanonicalVersionDirectoriesAreIgnoredWithAWarning) {
  WriteFile(root_ / "scale" / "07" / "model.onnx", ScaleModel(7));
  WriteFile(root_ / "scale" / "0" / "model.onnx", ScaleModel(7));
  WriteFile(root_ / "scale" / "99999999999999999999" / "model.onnx", ScaleModel(7));
  SetConfig("version_policy: all\n");
  LogCapture log;
  repository_->LoadAll();
  // Listed nowhere: only 1, 2 and 3 are versions.
  EXPECT_THAT(IndexLines(), ElementsAre("scale 1 READY", "scale 2 READY", "scale 3 READY"));
  const std::string text = log.text();
  for (const std::string& line :
       {"[warning] ignoring version directory " + (root_ / "scale" / "07").string() +
            ": '07' has a leading zero (expected '7')",
        "[warning] ignoring version directory " + (root_ / "scale" / "0").string() +
            ": '0' is 0, not a version (versions start at 1)",
        "[warning] ignoring version directory " +
            (root_ / "scale" / "99999999999999999999").string() +
            ": '99999999999999999999' is larger than the largest version, 9223372036854775807"}) {
    EXPECT_THAT(text, HasSubstr(line + "\n"));
  }
}

TEST_F(VersionedRepositoryTest, ALeadingZeroDirectoryAloneLeavesNoVersion) {
  fs::remove_all(root_ / "scale");
  WriteFile(root_ / "scale" / "01" / "model.onnx", ScaleModel(1));
  repository_->LoadAll();
  ASSERT_EQ(repository_->Index().size(), 1u);
  EXPECT_EQ(repository_->Index()[0].version, "");
  EXPECT_EQ(repository_->Index()[0].state, ModelState::kUnavailable);
  EXPECT_THAT(repository_->Index()[0].reason, HasSubstr("no numeric version directory"));
}

TEST_F(VersionedRepositoryTest, RequestsMustSpellTheVersionCanonically) {
  repository_->LoadAll();
  ASSERT_EQ((*repository_->GetReady("scale", "3"))->version(), 3);
  for (const char* version : {"03", "+3", "3.0", " 3", "0x3", "003"}) {
    auto model = repository_->GetReady("scale", version);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound) << version;
    EXPECT_EQ(model.status().message(),
              absl::StrCat("model 'scale' has no version '", version, "' (versions: 3)"));
  }
}

TEST_F(VersionedRepositoryTest, VersionsResolvingOutsideTheRootAreUnavailable) {
  const fs::path outside = root_.string() + "_outside";
  fs::remove_all(outside);
  WriteFile(outside / "4" / "model.onnx", ScaleModel(4));
  WriteFile(outside / "model5.onnx", ScaleModel(5));
  fs::create_directory_symlink(outside / "4", root_ / "scale" / "4");
  fs::create_directories(root_ / "scale" / "5");
  fs::create_symlink(outside / "model5.onnx", root_ / "scale" / "5" / "model.onnx");
  // A symlink that stays inside the root is fine.
  fs::create_directory_symlink(root_ / "scale" / "1", root_ / "scale" / "6");
  SetConfig("version_policy: all\n");
  repository_->LoadAll();
  EXPECT_THAT(IndexLines(),
              ElementsAre("scale 1 READY", "scale 2 READY", "scale 3 READY", "scale 4 UNAVAILABLE",
                          "scale 5 UNAVAILABLE", "scale 6 READY"));
  const fs::path root = fs::canonical(root_);
  const fs::path resolved_outside = fs::canonical(outside);
  EXPECT_EQ(
      repository_->Index()[3].reason,
      absl::StrCat("model 'scale' version 4: version directory ", (root_ / "scale" / "4").string(),
                   " resolves to ", (resolved_outside / "4").string(),
                   ", outside the repository root ", root.string(), " (refused)"));
  EXPECT_EQ(repository_->Index()[4].reason,
            absl::StrCat("model 'scale' version 5: model file ",
                         (root_ / "scale" / "5" / "model.onnx").string(), " resolves to ",
                         (resolved_outside / "model5.onnx").string(),
                         ", outside the repository root ", root.string(), " (refused)"));
  auto four = repository_->GetReady("scale", "4");
  EXPECT_EQ(four.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(*Infer(**repository_->GetReady("scale", "6"), 1, 4, {1, 2, 3, 4}),
              ElementsAre(1, 2, 3, 4));  // version 1's file, served as 6
  fs::remove_all(outside);
}

TEST_F(VersionedRepositoryTest, ARootSpelledWithATrailingSlashOrDotsStillHoldsItsModels) {
  for (const std::string& spelling :
       {root_.string() + "/", root_.string() + "/./", root_.string() + "/scale/.."}) {
    ModelRepository::Options options;
    options.root = spelling;
    auto repository = ModelRepository::Create(options);
    ASSERT_TRUE(repository.ok()) << repository.status();
    (*repository)->LoadAll();
    auto model = (*repository)->GetReady("scale", "3");
    ASSERT_TRUE(model.ok()) << spelling << ": " << model.status();
    EXPECT_EQ((*model)->version(), 3);
  }
}

TEST_F(VersionedRepositoryTest, AModelDirectoryOutsideTheRootIsUnavailable) {
  const fs::path outside = root_.string() + "_outside_model";
  fs::remove_all(outside);
  WriteFile(outside / "1" / "model.onnx", ScaleModel(1));
  fs::create_directory_symlink(outside, root_ / "elsewhere");
  repository_->LoadAll();
  EXPECT_THAT(IndexLines(), ElementsAre("elsewhere  UNAVAILABLE", "scale 3 READY"));
  EXPECT_EQ(
      repository_->Index()[0].reason,
      absl::StrCat("model 'elsewhere': directory ", (root_ / "elsewhere").string(), " resolves to ",
                   fs::canonical(outside).string(), ", outside the repository root ",
                   fs::canonical(root_).string(), " (refused)"));
  EXPECT_EQ(repository_->GetReady("elsewhere", "").status().code(), absl::StatusCode::kUnavailable);
  fs::remove_all(outside);
}

TEST_F(VersionedRepositoryTest, ASpecificVersionMissingOnDiskIsUnavailable) {
  SetConfig("version_policy: {specific: [2, 9]}\n");
  repository_->LoadAll();
  EXPECT_THAT(IndexLines(), ElementsAre("scale 2 READY", "scale 9 UNAVAILABLE"));
  EXPECT_THAT(repository_->Index()[1].reason, HasSubstr("no version directory"));
}

TEST_F(VersionedRepositoryTest, BadPolicyLeavesTheModelUnavailableNamingFileAndKey) {
  SetConfig("version_policy: {latest: -1}\n");
  repository_->LoadAll();
  absl::StatusOr<ModelStatus> status = repository_->GetStatus("scale");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state, ModelState::kUnavailable);
  EXPECT_THAT(status->reason, HasSubstr("config.yaml"));
  EXPECT_THAT(status->reason, HasSubstr("'version_policy.latest'"));
  EXPECT_THAT(status->reason, HasSubstr("received '-1'"));
}

TEST_F(VersionedRepositoryTest, LoadOverridesReplaceConfigAndFiles) {
  repository_->DiscoverOnly();
  LoadOverrides config;
  config.config = R"({"version_policy": {"specific": [1]}, "max_batch_size": 2})";
  ASSERT_TRUE(repository_->Load("scale", config).ok());
  EXPECT_THAT(IndexLines(), ElementsAre("scale 1 READY"));
  EXPECT_EQ((*repository_->GetReady("scale", ""))->config().max_batch_size, 2);

  LoadOverrides files;
  files.files["7/model.onnx"] = ScaleModel(7);
  ASSERT_TRUE(repository_->Load("scale", files).ok());
  EXPECT_THAT(IndexLines(), ElementsAre("scale 7 READY"));
  EXPECT_THAT(*Infer(**repository_->GetReady("scale", "7"), 1, 4, {1, 0, 0, 1}),
              ElementsAre(7, 0, 0, 7));
  EXPECT_FALSE(fs::exists(root_ / "scale" / "7"));  // never written into the repository

  for (const char* bad : {"../7/model.onnx", "/tmp/7/model.onnx", "7/other.onnx",
                          "7/../../model.onnx", "x/model.onnx", "07/model.onnx", "7/model.onnx/x",
                          "-1/model.onnx", "0/model.onnx", "99999999999999999999/model.onnx"}) {
    LoadOverrides evil;
    evil.files[bad] = "x";
    absl::Status status = repository_->Load("scale", evil);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr(bad));
  }
  EXPECT_THAT(IndexLines(), ElementsAre("scale 7 READY"));  // refused loads change nothing

  LoadOverrides bad_config;
  bad_config.config = R"({"buckets": "many"})";
  absl::Status status = repository_->Load("scale", bad_config);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("parameter 'config'"));
  EXPECT_THAT(IndexLines(), ElementsAre("scale 7 READY"));  // keeps serving
}

TEST_F(VersionedRepositoryTest, ModelsKnownOnlyThroughLoadFilesLeaveNoTrace) {
  repository_->DiscoverOnly();
  LoadOverrides files;
  files.files["1/model.onnx"] = ScaleModel(3);
  ASSERT_TRUE(repository_->Load("adhoc", files).ok());
  EXPECT_THAT(IndexLines(), ElementsAre("adhoc 1 READY", "scale  UNAVAILABLE"));
  ASSERT_TRUE(repository_->Unload("adhoc").ok());
  // No directory under the root: nothing to list once unloaded.
  EXPECT_THAT(IndexLines(), ElementsAre("scale  UNAVAILABLE"));
  EXPECT_EQ(repository_->GetStatus("adhoc").status().code(), absl::StatusCode::kNotFound);

  LoadOverrides broken;
  broken.files["1/model.onnx"] = "not an onnx model";
  EXPECT_FALSE(repository_->Load("adhoc2", broken).ok());
  EXPECT_THAT(IndexLines(), ElementsAre("scale  UNAVAILABLE"));  // a failed one-off is not listed
}

TEST_F(VersionedRepositoryTest, PaddedDimsBuildOneSessionPerBucketAndSize) {
  WriteFile(root_ / "seq" / "1" / "model.onnx", DoubleSequenceModel());
  WriteFile(root_ / "seq" / "config.yaml",
            "max_batch_size: 2\nbuckets: [1, 2]\n"
            "padded_dims: {d1: {sizes: [4, 8], pad_values: {x: 5}}}\n");
  repository_->LoadAll();
  auto model = repository_->GetReady("seq", "");
  ASSERT_TRUE(model.ok()) << model.status();
  const BucketSessions& sessions = (*model)->sessions();
  ASSERT_EQ(sessions.size(), 4u);
  EXPECT_EQ(sessions.bucket_label(0), "1x4");
  EXPECT_EQ(sessions.bucket_label(1), "1x8");
  EXPECT_EQ(sessions.bucket_label(2), "2x4");
  EXPECT_EQ(sessions.bucket_label(3), "2x8");
  EXPECT_THAT(*Infer(**model, 1, 3, {1, 2, 3}), ElementsAre(2, 4, 6));
  EXPECT_THAT(*Infer(**model, 2, 5, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
              ElementsAre(2, 4, 6, 8, 10, 12, 14, 16, 18, 20));
  absl::StatusOr<std::vector<float>> too_long = Infer(**model, 1, 9, std::vector<float>(9, 1));
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_long.status().message(), HasSubstr("input 'x' dimension 'd1'"));
  // Every engine run counted once: two runs so far.
  EXPECT_EQ((*model)->stats().Snapshot().execution_count, 2u);
}

TEST_F(VersionedRepositoryTest, PaddedDimsAreCheckedAgainstTheModel) {
  WriteFile(root_ / "seq" / "1" / "model.onnx", DoubleSequenceModel());
  repository_->DiscoverOnly();
  const std::string source = (root_ / "seq" / "config.yaml").string();
  WriteFile(root_ / "seq" / "config.yaml", "padded_dims: {sequence: {sizes: [4]}}\n");
  absl::Status unknown_dim = repository_->Load("seq");
  EXPECT_THAT(unknown_dim.message(), HasSubstr(source));
  EXPECT_THAT(unknown_dim.message(),
              HasSubstr("key 'padded_dims': expected a dim_param of the model's inputs ('d0', "
                        "'d1'), received 'sequence'"));
  WriteFile(root_ / "seq" / "config.yaml",
            "padded_dims: {d1: {sizes: [4], pad_values: {ids: 0}}}\n");
  EXPECT_THAT(repository_->Load("seq").message(),
              HasSubstr("key 'padded_dims.d1.pad_values.ids': expected an input with dimension "
                        "'d1' ('x'), received 'ids'"));
  WriteFile(root_ / "seq" / "config.yaml", "padded_dims: {d0: {sizes: [4]}}\n");
  EXPECT_THAT(repository_->Load("seq").message(),
              HasSubstr("expected a dimension other than the batch dimension"));
}

TEST_F(VersionedRepositoryTest, WarmupAndSessionOptionsComeFromConfigYaml) {
  SetConfig(
      "max_batch_size: 2\nbuckets: [1, 2]\nenable_mem_pattern: false\n"
      "warmup: {runs: 3, inputs: samples}\n");
  repository_->DiscoverOnly();
  // The sample directory is relative to the model directory.
  const std::string sample = (root_ / "scale" / "samples" / "x.pb").string();
  absl::Status missing = repository_->Load("scale");
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr(sample));

  fs::create_directories(root_ / "scale" / "samples");
  ASSERT_TRUE(onyx::WriteValueFile(sample,
                                   onyx::Value(onyx::testing::FloatTensor({1, 3}, {1, 2, 3})),
                                   onyx::ValueInfo::Kind::kTensor, "x")
                  .ok());
  EXPECT_THAT(
      repository_->Load("scale").message(),
      AllOf(HasSubstr(sample), HasSubstr("expected shape [d0, 4]"), HasSubstr("received [1,3]")));

  ASSERT_TRUE(onyx::WriteValueFile(sample,
                                   onyx::Value(onyx::testing::FloatTensor({1, 4}, {1, 2, 3, 4})),
                                   onyx::ValueInfo::Kind::kTensor, "x")
                  .ok());
  ASSERT_TRUE(repository_->Load("scale").ok());
  auto model = repository_->GetReady("scale", "");
  ASSERT_TRUE(model.ok()) << model.status();
  const BucketSessions& sessions = (*model)->sessions();
  ASSERT_EQ(sessions.size(), 2u);
  for (size_t i = 0; i < sessions.size(); ++i) {
    EXPECT_EQ(sessions.session(i).kernel_stats().at(0).count, 3);
    EXPECT_EQ(sessions.session(i).memory_plan_info().patterns, 0);  // enable_mem_pattern: false
  }
  EXPECT_THAT(*Infer(**model, 1, 4, {1, 2, 3, 4}), ElementsAre(3, 6, 9, 12));

  SetConfig("max_batch_size: 2\nbuckets: [1, 2]\nwarmup: {runs: 1, inputs: random}\n");
  ASSERT_TRUE(repository_->Load("scale").ok());
  model = repository_->GetReady("scale", "");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->sessions().session(1).kernel_stats().at(0).count, 1);
  EXPECT_EQ((*model)->sessions().session(1).memory_plan_info().patterns, 1);
}

}  // namespace
}  // namespace onyx::server
