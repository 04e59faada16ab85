// ModelProto bytes through everything InferenceSession::Create does: parse,
// check, shape inference, graph rewriting, partitioning, kernel creation and
// memory planning. Any input must end in a session or a Status.
#include <string_view>

#include "onyx/session.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The engine's info lines (one per rewrite) would be most of the work.
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::warn);
    return true;
  }();
  (void)quiet;
  onyx::SessionOptions options;
  options.providers = {"cpu"};
  options.intra_op_threads = 1;
  // Bounds the memory a fuzzed model may plan, as a deployment would (a
  // limit needs an arena of the session's own).
  options.arena_group = "fuzz";
  options.arena_limit_bytes = int64_t{256} << 20;
  auto session =
      onyx::InferenceSession::CreateFromBytes(std::string_view(reinterpret_cast<const char*>(data), size), options);
  if (session.ok()) {
    onyx::fuzz::Require(*session != nullptr, "Create returned OK and no session");
    onyx::fuzz::Accepted();
  } else {
    onyx::fuzz::Require(!session.status().message().empty(), "a refused model without a message");
  }
  return 0;
}
