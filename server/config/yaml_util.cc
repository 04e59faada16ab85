#include "server/config/yaml_util.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/status_macros.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"

namespace onyx::server::yaml_util {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": is a directory, not a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::FailedPreconditionError(absl::StrCat(path, ": read error"));
  return buffer.str();
}

namespace {

// yaml-cpp keeps every pair of a mapping and lookups return the first, so a
// repeated key would silently lose its later value: refuse it at every level.
absl::Status CheckNoDuplicateKeys(const YAML::Node& node, absl::string_view source,
                                  const std::string& path) {
  if (node.IsMap()) {
    std::map<std::string, int> first_line;  // key -> 1-based line
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : Describe(it->first);
      const std::string key_path = path.empty() ? key : absl::StrCat(path, ".", key);
      const int line = it->first.Mark().line + 1;
      auto [seen, inserted] = first_line.emplace(key, line);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(source, ": duplicate key '", key_path,
                                                       "' at line ", line, " (first given at line ",
                                                       seen->second, "); give each key once"));
      }
      RETURN_IF_ERROR(CheckNoDuplicateKeys(it->second, source, key_path));
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      RETURN_IF_ERROR(CheckNoDuplicateKeys(node[i], source, absl::StrCat(path, "[", i, "]")));
    }
  }
  return absl::OkStatus();
}

// Configuration needs neither aliases nor deep nesting, and both let a small
// document cost without bound: an alias bomb (aliases of aliases) expands
// exponentially in every walk of the node graph, and nesting thousands deep
// exhausts the stack of recursive walks. Refused from the parser's events,
// before any node graph is built.
constexpr int kMaxYamlDepth = 64;

struct YamlRefusal {
  YAML::Mark mark;
  std::string what;
};

class ShapeGuard : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw YamlRefusal{mark,
                      "aliases (*name) are not accepted in configuration; write the value out"};
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& mark) {
    if (++depth_ > kMaxYamlDepth) {
      throw YamlRefusal{
          mark, absl::StrCat("lists and mappings nested more than ", kMaxYamlDepth, " deep")};
    }
  }
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<YAML::Node> ParseDocument(absl::string_view text, absl::string_view source) {
  YAML::Node root;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    ShapeGuard guard;
    parser.HandleNextDocument(guard);
  } catch (const YamlRefusal& refusal) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": line ", refusal.mark.line + 1,
                                                   ", column ", refusal.mark.column + 1, ": ",
                                                   refusal.what));
  } catch (const YAML::Exception&) {
    // Reported with its position by YAML::Load below.
  }
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": YAML syntax error at line ",
                                                   e.mark.line + 1, ", column ", e.mark.column + 1,
                                                   ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": cannot parse YAML: ", e.what()));
  }
  if (root.IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": expected a mapping of keys at the top level, received ", Describe(root)));
  }
  try {
    RETURN_IF_ERROR(CheckNoDuplicateKeys(root, source, ""));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": cannot read YAML: ", e.what()));
  }
  return root;
}

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return absl::StrCat("'", node.Scalar(), "'");
}

absl::Status BadValue(absl::string_view source, absl::string_view key, absl::string_view expected,
                      absl::string_view received) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": key '", key, "': expected ", expected, ", received ", received));
}

absl::Status CheckKeys(const YAML::Node& map, std::initializer_list<absl::string_view> allowed,
                       absl::string_view source, absl::string_view prefix) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : Describe(it->first);
    bool known = false;
    for (absl::string_view a : allowed) known = known || a == key;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": unknown key '", prefix, key,
                       "' (expected one of: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> GetInt(const YAML::Node& node, absl::string_view source,
                               absl::string_view key, int64_t min, int64_t max) {
  const std::string expected = absl::StrCat("an integer in [", min, ", ", max, "]");
  int64_t value = 0;
  if (!node.IsDefined() || !node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) ||
      value < min || value > max) {
    return BadValue(source, key, expected, Describe(node));
  }
  return value;
}

absl::StatusOr<std::string> GetString(const YAML::Node& node, absl::string_view source,
                                      absl::string_view key) {
  if (!node.IsDefined() || !node.IsScalar() || node.Scalar().empty()) {
    return BadValue(source, key, "a non-empty string", Describe(node));
  }
  return node.Scalar();
}

absl::StatusOr<std::vector<int64_t>> GetIntList(const YAML::Node& node, absl::string_view source,
                                                absl::string_view key, int64_t min, int64_t max) {
  if (!node.IsDefined() || !node.IsSequence() || node.size() == 0) {
    return BadValue(source, key,
                    absl::StrCat("a non-empty list of integers in [", min, ", ", max, "]"),
                    node.IsDefined() && node.IsSequence() ? "an empty list" : Describe(node));
  }
  std::vector<int64_t> values;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string element_key = absl::StrCat(key, "[", i, "]");
    auto value = GetInt(node[i], source, element_key, min, max);
    if (!value.ok()) return value.status();
    values.push_back(*value);
  }
  return values;
}

absl::Status ExpectMap(const YAML::Node& node, absl::string_view source, absl::string_view key) {
  if (!node.IsDefined() || !node.IsMap()) return BadValue(source, key, "a mapping", Describe(node));
  return absl::OkStatus();
}

}  // namespace onyx::server::yaml_util
