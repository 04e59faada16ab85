// Strict, exception-free reading of small YAML configuration files.
//
//   ASSIGN_OR_RETURN(YAML::Node root, yaml_util::ParseDocument(text, path));
//   RETURN_IF_ERROR(yaml_util::CheckKeys(root, {"a", "b"}, path, ""));
//   ASSIGN_OR_RETURN(int64_t a, yaml_util::GetInt(root["a"], path, "a", 0, 100));
//
// yaml-cpp reports errors by throwing; every function here catches and returns
// INVALID_ARGUMENT instead. Messages have the shape
//   "<source>: key '<key>': expected <what>, received <what was there>"
// so an operator can fix the file without reading code.
// Thread-safe (no shared state); YAML::Node values themselves are thread-compatible.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace onyx::server::yaml_util {

// Reads a whole file. NOT_FOUND when it does not exist, FAILED_PRECONDITION when
// it cannot be read.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Parses one YAML document. An empty document yields an empty map. The top level
// must be a mapping; anything else, or a syntax error (with line and column), is
// INVALID_ARGUMENT naming `source`. So is a key given twice in one mapping, at
// any depth: the message names the key's path ("dynamic_batching.max_queue_delay_us",
// "warmup[0].runs" inside lists) and the 1-based lines of both occurrences.
absl::StatusOr<YAML::Node> ParseDocument(absl::string_view text, absl::string_view source);

// INVALID_ARGUMENT naming the first key of `map` not in `allowed`.
// `prefix` is prepended to key names in messages ("dynamic_batching.").
absl::Status CheckKeys(const YAML::Node& map, std::initializer_list<absl::string_view> allowed,
                       absl::string_view source, absl::string_view prefix);

// A scalar integer in [min, max] (decimal, optional sign).
absl::StatusOr<int64_t> GetInt(const YAML::Node& node, absl::string_view source,
                               absl::string_view key, int64_t min, int64_t max);

// A non-empty scalar string.
absl::StatusOr<std::string> GetString(const YAML::Node& node, absl::string_view source,
                                      absl::string_view key);

// A list of integers each in [min, max]; the list itself may not be empty.
absl::StatusOr<std::vector<int64_t>> GetIntList(const YAML::Node& node, absl::string_view source,
                                                absl::string_view key, int64_t min, int64_t max);

// A mapping (for nested sections).
absl::Status ExpectMap(const YAML::Node& node, absl::string_view source, absl::string_view key);

// How a node reads in an error message: "'abc'", "a list", "a mapping", "nothing".
std::string Describe(const YAML::Node& node);

// The standard error: "<source>: key '<key>': expected <expected>, received <received>".
absl::Status BadValue(absl::string_view source, absl::string_view key, absl::string_view expected,
                      absl::string_view received);

}  // namespace onyx::server::yaml_util
