#include "server/config/model_config.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onyx/session.h"

namespace onyx::server {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kSource[] = "repo/mlp/config.yaml";

std::string ErrorOf(const std::string& yaml) {
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig(yaml, kSource);
  EXPECT_FALSE(file.ok()) << "parsed: " << yaml;
  if (file.ok()) return "";
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(file.status().message());
}

TEST(ModelConfigTest, ParsesTheDocumentedExample) {
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig(
      "max_batch_size: 8            # 0 = model has no batch dimension\n"
      "buckets: [1, 2, 4, 8]\n"
      "dynamic_batching:\n"
      "  max_queue_delay_us: 200\n"
      "  max_queue_size: 256\n"
      "  max_inflight_bytes: 1048576\n"
      "instance_count: 1\n",
      kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->max_batch_size, 8);
  ASSERT_TRUE(file->buckets.has_value());
  EXPECT_THAT(*file->buckets, ElementsAre(1, 2, 4, 8));
  EXPECT_EQ(file->max_queue_delay_us, 200);
  EXPECT_EQ(file->max_queue_size, 256);
  EXPECT_EQ(file->max_inflight_bytes, 1048576);
  EXPECT_EQ(file->instance_count, 1);
}

TEST(ModelConfigTest, ParsesEngineSettings) {
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig(
      "providers: [test, cpu]\n"
      "optimization_level: basic\n"
      "max_cpu_fallback_nodes: 0\n"
      "intra_op_threads: 2\n",
      kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(*file->providers, ElementsAre("test", "cpu"));
  EXPECT_EQ(file->optimization_level, "basic");
  EXPECT_EQ(file->max_cpu_fallback_nodes, 0);
  EXPECT_EQ(file->intra_op_threads, 2);
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(*file, "", kSource);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->max_cpu_fallback_nodes, 0);
  EXPECT_THAT(config->providers, ElementsAre("test", "cpu"));
}

TEST(ModelConfigTest, BadEngineSettingsNameKeyAndExpectation) {
  EXPECT_THAT(ErrorOf("optimization_level: turbo\n"),
              AllOf(HasSubstr(kSource), HasSubstr("optimization_level"),
                    HasSubstr("disabled, basic, extended, all"), HasSubstr("turbo")));
  EXPECT_THAT(ErrorOf("providers: []\n"),
              AllOf(HasSubstr("providers"), HasSubstr("non-empty list")));
  EXPECT_THAT(ErrorOf("max_cpu_fallback_nodes: -5\n"), HasSubstr("max_cpu_fallback_nodes"));
}

TEST(ModelConfigTest, ParsesSessionOptionsAndWarmup) {
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig(
      "inter_op_threads: 4\n"
      "enable_mem_pattern: false\n"
      "mem_pattern_cache_size: 3\n"
      "warmup:\n"
      "  runs: 5\n"
      "  inputs: samples/warmup\n",
      kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(*file, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->inter_op_threads, 4);
  EXPECT_FALSE(config->enable_mem_pattern);
  EXPECT_EQ(config->mem_pattern_cache_size, 3);
  EXPECT_EQ(config->warmup.runs, 5);
  EXPECT_EQ(config->warmup.inputs, "samples/warmup");

  for (const char* inputs : {"zeros", "random"}) {
    file = ParseModelConfig(absl::StrCat("warmup: {runs: 0, inputs: ", inputs, "}\n"), kSource);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(file->warmup_runs, 0);
    EXPECT_EQ(file->warmup_inputs, inputs);
  }
  file = ParseModelConfig("inter_op_threads: 0\nenable_mem_pattern: true\n", kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->inter_op_threads, 0);
  EXPECT_EQ(file->enable_mem_pattern, true);
}

TEST(ModelConfigTest, ArenaLimitParsesDefaultsToNoneAndRejectsNegatives) {
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig("arena_limit_bytes: 67108864\n", kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->arena_limit_bytes, 67108864);
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(*file, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->arena_limit_bytes, 67108864);

  config = ResolveModelConfig(ModelConfigFile{}, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->arena_limit_bytes, 0);
  EXPECT_EQ(config->arena_limit_bytes, onyx::SessionOptions().arena_limit_bytes);

  EXPECT_THAT(
      ErrorOf("arena_limit_bytes: -1\n"),
      AllOf(HasSubstr(kSource), HasSubstr("key 'arena_limit_bytes': expected an integer in [0, "),
            HasSubstr("received '-1'")));
  EXPECT_THAT(ErrorOf("arena_limit_bytes: 64MB\n"), HasSubstr("received '64MB'"));
}

TEST(ModelConfigTest, SessionOptionsAndWarmupDefaultToTheEngineDefaults) {
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(ModelConfigFile{}, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  const onyx::SessionOptions engine;
  EXPECT_EQ(config->inter_op_threads, engine.inter_op_threads);
  EXPECT_EQ(config->enable_mem_pattern, engine.enable_mem_pattern);
  EXPECT_EQ(config->mem_pattern_cache_size, engine.mem_pattern_cache_size);
  EXPECT_EQ(config->warmup.runs, 2);
  EXPECT_EQ(config->warmup.inputs, "zeros");
  // Keys given alone leave the others at their defaults.
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig("warmup: {inputs: random}\n", kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  config = ResolveModelConfig(*file, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->warmup.runs, 2);
  EXPECT_EQ(config->warmup.inputs, "random");
}

TEST(ModelConfigTest, BadSessionOptionsAndWarmupNameFileKeyExpectedAndReceived) {
  EXPECT_THAT(ErrorOf("inter_op_threads: -1\n"),
              AllOf(HasSubstr(kSource),
                    HasSubstr("key 'inter_op_threads': expected an integer in [0, 1024]"),
                    HasSubstr("received '-1'")));
  EXPECT_THAT(ErrorOf("inter_op_threads: 2000\n"), HasSubstr("received '2000'"));
  EXPECT_THAT(ErrorOf("inter_op_threads: many\n"), HasSubstr("received 'many'"));
  EXPECT_THAT(
      ErrorOf("enable_mem_pattern: yes please\n"),
      AllOf(HasSubstr(kSource), HasSubstr("key 'enable_mem_pattern': expected true or false"),
            HasSubstr("received 'yes please'")));
  EXPECT_THAT(ErrorOf("enable_mem_pattern: [true]\n"), HasSubstr("received a list"));
  EXPECT_THAT(ErrorOf("mem_pattern_cache_size: 0\n"),
              AllOf(HasSubstr("key 'mem_pattern_cache_size': expected an integer in [1, 65536]"),
                    HasSubstr("received '0'")));
  EXPECT_THAT(ErrorOf("mem_pattern_cache_size: 1.5\n"), HasSubstr("received '1.5'"));
  EXPECT_THAT(ErrorOf("warmup: 3\n"), AllOf(HasSubstr(kSource), HasSubstr("key 'warmup'")));
  EXPECT_THAT(ErrorOf("warmup: {runs: -1}\n"),
              AllOf(HasSubstr("key 'warmup.runs': expected an integer in [0, 1000]"),
                    HasSubstr("received '-1'")));
  EXPECT_THAT(ErrorOf("warmup: {runs: 1001}\n"), HasSubstr("received '1001'"));
  EXPECT_THAT(
      ErrorOf("warmup: {inputs: /abs/dir}\n"),
      AllOf(HasSubstr("key 'warmup.inputs': expected zeros, random or a directory relative to the "
                      "model directory"),
            HasSubstr("received '/abs/dir'")));
  EXPECT_THAT(ErrorOf("warmup: {inputs: [a]}\n"),
              AllOf(HasSubstr("key 'warmup.inputs'"), HasSubstr("received a list")));
  EXPECT_THAT(ErrorOf("warmup: {inputs: ''}\n"), HasSubstr("key 'warmup.inputs'"));
  EXPECT_THAT(ErrorOf("warmup: {count: 2}\n"), HasSubstr("warmup.count"));
}

TEST(ModelConfigTest, EmptyDocumentSetsNothing) {
  for (const char* text : {"", "# only a comment\n"}) {
    absl::StatusOr<ModelConfigFile> file = ParseModelConfig(text, kSource);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_FALSE(file->max_batch_size.has_value());
    EXPECT_FALSE(file->buckets.has_value());
    EXPECT_FALSE(file->max_queue_delay_us.has_value());
    EXPECT_FALSE(file->max_queue_size.has_value());
    EXPECT_FALSE(file->instance_count.has_value());
    EXPECT_FALSE(file->inter_op_threads.has_value());
    EXPECT_FALSE(file->enable_mem_pattern.has_value());
    EXPECT_FALSE(file->mem_pattern_cache_size.has_value());
    EXPECT_FALSE(file->warmup_runs.has_value());
    EXPECT_FALSE(file->warmup_inputs.has_value());
  }
}

TEST(ModelConfigTest, UnknownKeyNamesFileAndKey) {
  EXPECT_THAT(
      ErrorOf("max_batch: 8\n"),
      AllOf(HasSubstr(kSource), HasSubstr("unknown key 'max_batch'"), HasSubstr("max_batch_size")));
}

TEST(ModelConfigTest, UnknownNestedKeyIsQualified) {
  EXPECT_THAT(ErrorOf("dynamic_batching:\n  max_delay_us: 5\n"),
              AllOf(HasSubstr(kSource), HasSubstr("'dynamic_batching.max_delay_us'")));
}

TEST(ModelConfigTest, NegativeMaxBatchSizeSaysExpectedAndReceived) {
  EXPECT_THAT(ErrorOf("max_batch_size: -1\n"),
              AllOf(HasSubstr(kSource), HasSubstr("key 'max_batch_size'"),
                    HasSubstr("expected an integer in [0, 65536]"), HasSubstr("received '-1'")));
}

TEST(ModelConfigTest, NonIntegerValuesAreRejected) {
  EXPECT_THAT(ErrorOf("instance_count: two\n"),
              AllOf(HasSubstr("key 'instance_count'"), HasSubstr("received 'two'")));
  EXPECT_THAT(ErrorOf("max_batch_size: 2.5\n"), HasSubstr("received '2.5'"));
  EXPECT_THAT(ErrorOf("max_batch_size: [8]\n"), HasSubstr("received a list"));
  EXPECT_THAT(ErrorOf("max_batch_size:\n"), HasSubstr("received nothing"));
}

TEST(ModelConfigTest, OutOfRangeValuesAreRejected) {
  EXPECT_THAT(ErrorOf("instance_count: 0\n"),
              AllOf(HasSubstr("expected an integer in [1, 64]"), HasSubstr("received '0'")));
  EXPECT_THAT(ErrorOf("dynamic_batching:\n  max_queue_size: 0\n"),
              HasSubstr("key 'dynamic_batching.max_queue_size'"));
  EXPECT_THAT(ErrorOf("dynamic_batching:\n  max_queue_delay_us: -5\n"),
              HasSubstr("key 'dynamic_batching.max_queue_delay_us'"));
  EXPECT_THAT(
      ErrorOf("dynamic_batching:\n  max_inflight_bytes: -1\n"),
      AllOf(HasSubstr("key 'dynamic_batching.max_inflight_bytes'"), HasSubstr("received '-1'")));
}

TEST(ModelConfigTest, BadBucketsAreRejected) {
  EXPECT_THAT(ErrorOf("buckets: 4\n"),
              AllOf(HasSubstr("key 'buckets'"), HasSubstr("received '4'")));
  EXPECT_THAT(ErrorOf("buckets: []\n"), HasSubstr("received an empty list"));
  EXPECT_THAT(ErrorOf("buckets: [1, 0]\n"),
              AllOf(HasSubstr("key 'buckets[1]'"), HasSubstr("received '0'")));
  EXPECT_THAT(ErrorOf("buckets: [1, 4, 2]\n"),
              AllOf(HasSubstr("strictly ascending"), HasSubstr("received [1, 4, 2]")));
  EXPECT_THAT(ErrorOf("buckets: [2, 2]\n"), HasSubstr("strictly ascending"));
}

TEST(ModelConfigTest, SectionMustBeAMapping) {
  EXPECT_THAT(ErrorOf("dynamic_batching: 200\n"),
              AllOf(HasSubstr("key 'dynamic_batching'"), HasSubstr("expected a mapping"),
                    HasSubstr("received '200'")));
}

TEST(ModelConfigTest, SyntaxErrorsGiveTheLine) {
  EXPECT_THAT(ErrorOf("max_batch_size: 8\nbuckets: [1, 2\n"),
              AllOf(HasSubstr(kSource), HasSubstr("YAML syntax error at line")));
  EXPECT_THAT(ErrorOf("- 1\n- 2\n"), HasSubstr("expected a mapping of keys at the top level"));
}

TEST(ModelConfigTest, DefaultBucketsArePowersOfTwoThenMax) {
  EXPECT_THAT(DefaultBuckets(0), IsEmpty());
  EXPECT_THAT(DefaultBuckets(1), ElementsAre(1));
  EXPECT_THAT(DefaultBuckets(6), ElementsAre(1, 2, 4, 6));
  EXPECT_THAT(DefaultBuckets(8), ElementsAre(1, 2, 4, 8));
  EXPECT_THAT(DefaultBuckets(9), ElementsAre(1, 2, 4, 8, 9));
}

TEST(ModelConfigTest, DefaultIntraOpThreadsShareTheQuotaAmongConcurrentRuns) {
  EXPECT_EQ(DefaultIntraOpThreads(16, 1, 1), 16);
  EXPECT_EQ(DefaultIntraOpThreads(16, 2, 1), 8);
  EXPECT_EQ(DefaultIntraOpThreads(16, 3, 1), 5);  // rounded down: never more threads than cores
  EXPECT_EQ(DefaultIntraOpThreads(16, 2, 4), 2);  // each run's lanes also run side by side
  EXPECT_EQ(DefaultIntraOpThreads(2, 4, 1), 1);   // at least one
  EXPECT_EQ(DefaultIntraOpThreads(8, 1, 0), 8);   // inter_op_threads 0 means sequential
}

TEST(ModelConfigTest, AnExplicitIntraOpThreadCountWins) {
  ModelConfig config;
  config.instance_count = 4;
  EXPECT_EQ(EffectiveIntraOpThreads(config, 16), 4);
  config.intra_op_threads = 6;
  EXPECT_EQ(EffectiveIntraOpThreads(config, 16), 6);
}

TEST(ModelConfigTest, ResolveDerivesBatchingFromTheModel) {
  absl::StatusOr<ModelConfig> batched = ResolveModelConfig(ModelConfigFile{}, "", kSource);
  ASSERT_TRUE(batched.ok()) << batched.status();
  EXPECT_EQ(batched->max_batch_size, 8);
  EXPECT_THAT(batched->buckets, ElementsAre(1, 2, 4, 8));
  EXPECT_EQ(batched->instance_count, 1);
  EXPECT_EQ(batched->dynamic_batching.max_queue_size, 256);
  EXPECT_EQ(batched->dynamic_batching.max_queue_delay_us, 0);

  absl::StatusOr<ModelConfig> fixed =
      ResolveModelConfig(ModelConfigFile{}, "input 'x' has fixed first dimension 1", kSource);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->max_batch_size, 0);
  EXPECT_THAT(fixed->buckets, IsEmpty());
}

TEST(ModelConfigTest, ResolveKeepsWhatTheFileSays) {
  ModelConfigFile file;
  file.max_batch_size = 6;
  file.max_queue_delay_us = 200;
  file.max_queue_size = 10;
  file.max_inflight_bytes = 4096;
  file.instance_count = 3;
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(file, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dynamic_batching.max_inflight_bytes, 4096);
  EXPECT_EQ(config->max_batch_size, 6);
  EXPECT_THAT(config->buckets, ElementsAre(1, 2, 4, 6));
  EXPECT_EQ(config->dynamic_batching.max_queue_delay_us, 200);
  EXPECT_EQ(config->dynamic_batching.max_queue_size, 10);
  EXPECT_EQ(config->instance_count, 3);

  file.buckets = std::vector<int64_t>{2, 6};
  config = ResolveModelConfig(file, "", kSource);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->buckets, ElementsAre(2, 6));
}

TEST(ModelConfigTest, ResolveRejectsInconsistentValues) {
  ModelConfigFile batching;
  batching.max_batch_size = 4;
  absl::StatusOr<ModelConfig> config =
      ResolveModelConfig(batching, "input 'x' has fixed first dimension 1", kSource);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr(kSource), HasSubstr("key 'max_batch_size'"),
                    HasSubstr("input 'x' has fixed first dimension 1"), HasSubstr("received '4'")));

  ModelConfigFile no_batch;
  no_batch.max_batch_size = 0;
  no_batch.buckets = std::vector<int64_t>{1, 2};
  config = ResolveModelConfig(no_batch, "", kSource);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("no buckets when max_batch_size is 0"));

  ModelConfigFile short_buckets;
  short_buckets.max_batch_size = 8;
  short_buckets.buckets = std::vector<int64_t>{1, 2, 4};
  config = ResolveModelConfig(short_buckets, "", kSource);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr("ending at max_batch_size 8"), HasSubstr("received [1, 2, 4]")));
}

TEST(ModelConfigTest, MissingFileMeansDefaults) {
  absl::StatusOr<ModelConfigFile> file =
      LoadModelConfigFile(::testing::TempDir() + "/no_such_dir/config.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(file->max_batch_size.has_value());
}

TEST(ModelConfigTest, LoadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "/model_config_test.yaml";
  {
    std::ofstream out(path);
    out << "max_batch_size: 4\ninstance_count: 100\n";
  }
  absl::StatusOr<ModelConfigFile> file = LoadModelConfigFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), AllOf(HasSubstr(path), HasSubstr("instance_count")));
  std::remove(path.c_str());
}

TEST(ModelConfigTest, ParsesVersionPolicies) {
  absl::StatusOr<ModelConfigFile> latest =
      ParseModelConfig("version_policy: {latest: 2}\n", kSource);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->version_policy->kind, VersionPolicy::Kind::kLatest);
  EXPECT_EQ(latest->version_policy->latest, 2);
  absl::StatusOr<ModelConfigFile> specific =
      ParseModelConfig("version_policy:\n  specific: [3, 1]\n", kSource);
  ASSERT_TRUE(specific.ok()) << specific.status();
  EXPECT_EQ(specific->version_policy->kind, VersionPolicy::Kind::kSpecific);
  EXPECT_THAT(specific->version_policy->specific, ElementsAre(1, 3));
  absl::StatusOr<ModelConfigFile> all = ParseModelConfig("version_policy: all\n", kSource);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->version_policy->kind, VersionPolicy::Kind::kAll);
  // JSON is YAML: a load's `config` parameter parses the same way.
  absl::StatusOr<ModelConfigFile> json =
      ParseModelConfig(R"({"max_batch_size": 4, "version_policy": {"latest": 3}})", kSource);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->max_batch_size, 4);
  EXPECT_EQ(json->version_policy->latest, 3);
  // Without the key: latest 1, as Triton.
  absl::StatusOr<ModelConfigFile> none = ParseModelConfig("", kSource);
  ASSERT_TRUE(none.ok());
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(*none, "", kSource);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->version_policy.kind, VersionPolicy::Kind::kLatest);
  EXPECT_EQ(config->version_policy.latest, 1);
}

TEST(ModelConfigTest, BadVersionPoliciesNameFileKeyExpectedAndReceived) {
  EXPECT_THAT(ErrorOf("version_policy: newest\n"),
              AllOf(HasSubstr(kSource), HasSubstr("'version_policy'"), HasSubstr("{latest: N}"),
                    HasSubstr("received 'newest'")));
  EXPECT_THAT(ErrorOf("version_policy: {latest: 0}\n"),
              AllOf(HasSubstr("'version_policy.latest'"), HasSubstr("received '0'")));
  EXPECT_THAT(ErrorOf("version_policy: {oldest: 1}\n"), HasSubstr("oldest"));
  EXPECT_THAT(ErrorOf("version_policy: {specific: [1, 1]}\n"),
              AllOf(HasSubstr("'version_policy.specific'"), HasSubstr("distinct versions")));
  EXPECT_THAT(ErrorOf("version_policy: {specific: [0, 2]}\n"),
              AllOf(HasSubstr("'version_policy.specific[0]'"),
                    HasSubstr("expected an integer in [1, 9223372036854775807], received '0'")));
  EXPECT_THAT(ErrorOf("version_policy: {specific: []}\n"),
              AllOf(HasSubstr("'version_policy.specific'"), HasSubstr("an empty list")));
  EXPECT_THAT(ErrorOf("version_policy: {latest: 1, specific: [1]}\n"),
              HasSubstr("'version_policy'"));
}

TEST(ModelConfigTest, SelectVersionsAppliesThePolicy) {
  VersionPolicy latest;
  latest.latest = 2;
  EXPECT_THAT(SelectVersions(latest, {1, 10, 3, 2}), ElementsAre(3, 10));
  latest.latest = 5;
  EXPECT_THAT(SelectVersions(latest, {2, 1}), ElementsAre(1, 2));
  VersionPolicy specific;
  specific.kind = VersionPolicy::Kind::kSpecific;
  specific.specific = {1, 4};
  EXPECT_THAT(SelectVersions(specific, {1, 2, 3}), ElementsAre(1, 4));  // 4: reported missing
  VersionPolicy all;
  all.kind = VersionPolicy::Kind::kAll;
  EXPECT_THAT(SelectVersions(all, {3, 1, 2}), ElementsAre(1, 2, 3));
  EXPECT_THAT(SelectVersions(VersionPolicy{}, {}), IsEmpty());
}

TEST(ModelConfigTest, ParsesPaddedDims) {
  absl::StatusOr<ModelConfigFile> file = ParseModelConfig(
      "padded_dims:\n"
      "  sequence:\n"
      "    sizes: [16, 32, 64, 128]\n"
      "    pad_values: {input_ids: 0, scale: -1.5}\n"
      "  width:\n"
      "    sizes: [8]\n",
      kSource);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->padded_dims->size(), 2u);
  const PaddedDimConfig& sequence = file->padded_dims->at("sequence");
  EXPECT_THAT(sequence.sizes, ElementsAre(16, 32, 64, 128));
  EXPECT_EQ(sequence.pad_values.at("input_ids"), 0.0);
  EXPECT_EQ(sequence.pad_values.at("scale"), -1.5);
  EXPECT_THAT(file->padded_dims->at("width").pad_values, IsEmpty());
  absl::StatusOr<ModelConfig> config = ResolveModelConfig(*file, "", kSource);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->padded_dims.size(), 2u);
}

TEST(ModelConfigTest, BadPaddedDimsNameFileKeyExpectedAndReceived) {
  EXPECT_THAT(ErrorOf("padded_dims: [16]\n"),
              AllOf(HasSubstr(kSource), HasSubstr("'padded_dims'"), HasSubstr("a mapping")));
  EXPECT_THAT(ErrorOf("padded_dims: {seq: {pad_values: {x: 0}}}\n"),
              AllOf(HasSubstr("'padded_dims.seq.sizes'"), HasSubstr("received nothing")));
  EXPECT_THAT(ErrorOf("padded_dims: {seq: {sizes: [32, 16]}}\n"),
              AllOf(HasSubstr("'padded_dims.seq.sizes'"), HasSubstr("strictly ascending"),
                    HasSubstr("[32, 16]")));
  EXPECT_THAT(ErrorOf("padded_dims: {seq: {sizes: [0]}}\n"),
              HasSubstr("'padded_dims.seq.sizes[0]'"));
  EXPECT_THAT(ErrorOf("padded_dims: {seq: {sizes: [4], pad_values: {x: pad}}}\n"),
              AllOf(HasSubstr("'padded_dims.seq.pad_values.x'"), HasSubstr("a finite number"),
                    HasSubstr("received 'pad'")));
  EXPECT_THAT(ErrorOf("padded_dims: {seq: {sizes: [4], pad: 1}}\n"),
              HasSubstr("padded_dims.seq.pad"));
}

TEST(ModelConfigTest, DuplicateKeysAreRefusedAtEveryLevelNamingBothLines) {
  EXPECT_EQ(ErrorOf("max_batch_size: 4\nmax_batch_size: 8\n"),
            absl::StrCat(kSource,
                         ": duplicate key 'max_batch_size' at line 2 (first given at "
                         "line 1); give each key once"));
  EXPECT_EQ(ErrorOf("max_batch_size: 8\n"
                    "dynamic_batching:\n"
                    "  max_queue_delay_us: 100\n"
                    "  max_queue_size: 4\n"
                    "  max_queue_delay_us: 200\n"),
            absl::StrCat(kSource,
                         ": duplicate key 'dynamic_batching.max_queue_delay_us' at line "
                         "5 (first given at line 3); give each key once"));
  EXPECT_THAT(ErrorOf("warmup: {runs: 1, inputs: zeros, runs: 3}\n"),
              HasSubstr("duplicate key 'warmup.runs' at line 1 (first given at line 1)"));
  EXPECT_THAT(ErrorOf("max_batch_size: 4\n"
                      "padded_dims:\n"
                      "  seq:\n"
                      "    sizes: [8]\n"
                      "    pad_values: {ids: 0, ids: 1}\n"),
              HasSubstr("duplicate key 'padded_dims.seq.pad_values.ids' at line 5 (first given "
                        "at line 5)"));
  EXPECT_THAT(ErrorOf("padded_dims:\n"
                      "  seq: {sizes: [8]}\n"
                      "  seq: {sizes: [16]}\n"),
              HasSubstr("duplicate key 'padded_dims.seq' at line 3 (first given at line 2)"));
  EXPECT_THAT(ErrorOf("version_policy: {latest: 1, latest: 2}\n"),
              HasSubstr("duplicate key 'version_policy.latest'"));
  // The same key in sibling mappings is not a duplicate.
  EXPECT_TRUE(ParseModelConfig("max_batch_size: 4\n"
                               "padded_dims:\n"
                               "  a: {sizes: [8], pad_values: {x: 0}}\n"
                               "  b: {sizes: [16], pad_values: {x: 1}}\n",
                               kSource)
                  .ok());
}

}  // namespace
}  // namespace onyx::server
