#include "onyx/huge_page_malloc.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"

namespace onyx {

std::optional<std::string> HugePageTunables(const char* tunables, const char* choice, const std::string& thp_mode,
                                            bool by_default) {
  const bool wanted = choice == nullptr ? by_default : std::string(choice) != "0";
  if (!wanted) return std::nullopt;
  // The selected mode is the bracketed word.
  if (!absl::StrContains(thp_mode, "[always]") && !absl::StrContains(thp_mode, "[madvise]")) return std::nullopt;
  const std::string current = tunables != nullptr ? tunables : "";
  if (absl::StrContains(current, "glibc.malloc.hugetlb")) return std::nullopt;  // chosen already, or by us
  return current.empty() ? std::string("glibc.malloc.hugetlb=1") : current + ":glibc.malloc.hugetlb=1";
}

void ReexecWithHugePageMalloc(char** argv, bool by_default) {
#ifdef __GLIBC__
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::stringstream mode;
  mode << file.rdbuf();
  const std::optional<std::string> tunables =
      HugePageTunables(std::getenv("GLIBC_TUNABLES"), std::getenv("ONYX_HUGE_PAGE_MALLOC"), mode.str(), by_default);
  if (!tunables.has_value() || argv == nullptr || argv[0] == nullptr) return;
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::string original = before != nullptr ? before : "";
  if (setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  // The binary's own path, not /proc/self/exe: the process keeps its name
  // (ps, top, pkill onyxd).
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length > 0) {
    path[length] = '\0';
    execv(path, argv);
  }
  // exec failed (no /proc, the binary replaced): run as is, with the
  // environment as it was, so child processes inherit nothing chosen here.
  if (before != nullptr) {
    setenv("GLIBC_TUNABLES", original.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  (void)argv;
  (void)by_default;
#endif
}

}  // namespace onyx
