#include "session/provider_loader.h"

#include <stdlib.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "onyx/build_id.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;

bool Contains(absl::string_view text, absl::string_view part) { return text.find(part) != absl::string_view::npos; }

// The test runtime makes the build tree's provider folder searchable on the
// registry's first use; a session creation is that use.
void UseRegistry() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  ASSERT_TRUE(InferenceSession::CreateFromBytes(m.Serialize(), {}).ok());
}

TEST(ProviderLoaderTest, LoadsTheTestProviderLibraryOnceWithAMatchingHandshake) {
  UseRegistry();
  auto library = LoadProviderLibrary("test");
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->name, "test");
  EXPECT_EQ((*library)->build_id, ONYX_BUILD_ID);
  EXPECT_EQ(std::filesystem::path((*library)->path).filename(), "libonyx_provider_test.so");
  EXPECT_NE((*library)->create, nullptr);
  auto again = LoadProviderLibrary("test");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *library);  // cached, not loaded twice
  auto by_file = LoadProviderLibraryFile((*library)->path, "test");
  ASSERT_TRUE(by_file.ok()) << by_file.status();
  EXPECT_EQ(*by_file, *library);
}

struct HandshakeCase {
  const char* name;
  std::vector<std::string> message_parts;
};

TEST(ProviderLoaderTest, RefusesEveryBrokenHandshakeNamingTheLibraryAndTheMismatch) {
  UseRegistry();
  const std::string expected_abi = absl::StrCat("expects version ", kProviderAbiVersion);
  const std::vector<HandshakeCase> cases = {
      {"badabi",
       {"libonyx_provider_badabi.so", absl::StrCat("ABI version ", kProviderAbiVersion + 1000), expected_abi}},
      {"badbuild", {"libonyx_provider_badbuild.so", "'0.0.0-another-build'", ONYX_BUILD_ID}},
      {"noentry", {"libonyx_provider_noentry.so", "not an onyx provider library", "OnyxProviderLibraryEntry"}},
      {"unresolved", {"cannot load", "libonyx_provider_unresolved.so", "onyx_symbol_no_binary_defines"}},
      {"misnamed", {"libonyx_provider_misnamed.so", "registers provider 'someone_else', expected 'misnamed'"}},
  };
  for (const HandshakeCase& c : cases) {
    auto library = LoadProviderLibrary(c.name);
    ASSERT_FALSE(library.ok()) << c.name;
    EXPECT_TRUE(absl::IsFailedPrecondition(library.status())) << library.status();
    for (const std::string& part : c.message_parts) {
      EXPECT_TRUE(Contains(library.status().message(), part)) << c.name << ": " << library.status();
    }
  }
}

TEST(ProviderLoaderTest, AMissingLibrarySaysWhereItLookedAndABadNameIsRefused) {
  UseRegistry();
  auto missing = LoadProviderLibrary("nosuch");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_TRUE(Contains(missing.status().message(), "libonyx_provider_nosuch.so")) << missing.status();
  for (const std::string& dir : ProviderSearchDirectories()) {
    EXPECT_TRUE(Contains(missing.status().message(), dir)) << dir << " not named in " << missing.status();
  }
  auto traversal = LoadProviderLibrary("../test");
  EXPECT_TRUE(absl::IsInvalidArgument(traversal.status())) << traversal.status();
}

TEST(ProviderLoaderTest, SearchesBesideTheExecutableThenOnyxProviderPath) {
  UseRegistry();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "onyx_provider_path_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // A library found only through ONYX_PROVIDER_PATH: the misnamed one under
  // the file name of provider "viaenv", so the answer names what was loaded.
  const std::string lib_dir = ProviderSearchDirectories().back();
  std::filesystem::copy_file(std::filesystem::path(lib_dir) / "libonyx_provider_misnamed.so",
                             dir / "libonyx_provider_viaenv.so");
  ASSERT_EQ(setenv("ONYX_PROVIDER_PATH", ("/nonexistent:" + dir.string()).c_str(), 1), 0);
  std::vector<std::string> dirs = ProviderSearchDirectories();
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], std::filesystem::read_symlink("/proc/self/exe").parent_path().string());
  EXPECT_EQ(dirs[1], "/nonexistent");
  EXPECT_EQ(dirs[2], dir.string());
  auto via_env = LoadProviderLibrary("viaenv");
  unsetenv("ONYX_PROVIDER_PATH");
  ASSERT_FALSE(via_env.ok());
  EXPECT_TRUE(Contains(via_env.status().message(), (dir / "libonyx_provider_viaenv.so").string())) << via_env.status();
  EXPECT_TRUE(Contains(via_env.status().message(), "expected 'viaenv'")) << via_env.status();
  std::filesystem::remove_all(dir);
}

ModelBuilder Chain() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("Add", {"r", "x"}, {"y"}, "add");
  return m;
}

TEST(ProviderLoaderTest, AnUnavailableProviderFallsBackToCpuCountedUnlessRequired) {
  SessionOptions options;
  options.model_name = "chain";
  options.providers = {"nosuch", "cpu"};
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const PartitionReport& report = (*session)->partition_report();
  ASSERT_EQ(report.unavailable_providers.count("nosuch"), 1u);
  EXPECT_TRUE(Contains(report.unavailable_providers.at("nosuch"), "libonyx_provider_nosuch.so"));
  ASSERT_EQ(report.fallback_nodes.size(), 2u);  // both nodes, each counted once
  for (const FallbackNode& f : report.fallback_nodes) {
    EXPECT_EQ(f.provider, "nosuch");
    EXPECT_TRUE(Contains(f.reason, "provider unavailable")) << f.reason;
  }
  EXPECT_TRUE(Contains(report.ToString(), "provider nosuch unavailable")) << report.ToString();
  // The fallback still computes: y = relu(x) + x.
  Tensor x = testing::FloatTensor({2, 3}, {-1, 2, -3, 4, -5, 6});
  auto out = (*session)->Run(RunOptions(), {{"x", Value(x)}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> expected = {-1, 4, -3, 8, -5, 12};
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].tensor().data<float>()[i], expected[i]);

  options.require_providers = true;
  auto required = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_FALSE(required.ok());
  EXPECT_TRUE(absl::IsNotFound(required.status()));
  EXPECT_TRUE(Contains(required.status().message(), "chain")) << required.status();
  EXPECT_TRUE(Contains(required.status().message(), "'nosuch' (required)")) << required.status();

  // A library that fails its handshake is unavailable the same way.
  options.require_providers = false;
  options.providers = {"badabi"};
  auto broken = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_TRUE(broken.ok()) << broken.status();
  EXPECT_EQ((*broken)->partition_report().fallback_nodes.size(), 2u);
}

TEST(ProviderLoaderTest, ABadProviderOptionFailsEvenWhenNotRequired) {
  SessionOptions options;
  options.providers = {"test:ops=Relu;bogus=1"};
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(session.status()));
  EXPECT_TRUE(Contains(session.status().message(), "no option 'bogus'")) << session.status();
}

TEST(ProviderLoaderTest, CudaOnAHostWithoutAGpuFallsBackOrFailsWhenRequired) {
  SessionOptions options;
  options.providers = {"cuda"};
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const PartitionReport& report = (*session)->partition_report();
  if (report.unavailable_providers.count("cuda") == 0) GTEST_SKIP() << "this host runs the cuda provider";
  EXPECT_EQ(report.fallback_nodes.size(), 2u);
  EXPECT_EQ(report.nodes_per_provider.count("cuda"), 0u);
  options.require_providers = true;
  auto required = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_FALSE(required.ok());
  EXPECT_TRUE(Contains(required.status().message(), "'cuda' (required)")) << required.status();
}

}  // namespace
}  // namespace onyx
