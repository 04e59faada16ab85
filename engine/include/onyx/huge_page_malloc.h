// Lets glibc's malloc back large blocks with transparent huge pages, set once
// at startup by re-executing the process with `glibc.malloc.hugetlb=1` added
// to GLIBC_TUNABLES (glibc reads tunables only when a process starts).
//
// Why: a session copies every weight out of the parsed model into fresh
// memory, and on virtual machines each 4 KiB page fault is expensive —
// creating a BERT-base session (440 MB of weights) spent 2.7 s in page faults
// on the project's build machine, 0.4-0.65 s with 2 MiB pages; run latency was
// unchanged and peak RSS 3 MB higher. The cost: RSS then moves in 2 MiB
// steps, which a long-running server with small models sees as drift (the
// soak test's 37 MB onyxd grew 2-6%), so the `onyx` CLI does it by default
// and onyxd only when asked. Only where the kernel's THP mode is "madvise"
// or "always"; ONYX_HUGE_PAGE_MALLOC=0 / =1 in the environment turns it off /
// on, and a GLIBC_TUNABLES that already names glibc.malloc.hugetlb leaves the
// process as it started.
//
//   int main(int argc, char** argv) {
//     onyx::ReexecWithHugePageMalloc(argv, /*by_default=*/true);  // first line: before any thread
#pragma once

#include <optional>
#include <string>

namespace onyx {

// The GLIBC_TUNABLES value to re-execute with, or nullopt to run as is.
// `tunables` and `opt_out` are the environment's GLIBC_TUNABLES and
// ONYX_HUGE_PAGE_MALLOC (nullptr when unset: then `by_default` decides);
// `thp_mode` is the contents of /sys/kernel/mm/transparent_hugepage/enabled
// ("always [madvise] never").
std::optional<std::string> HugePageTunables(const char* tunables, const char* choice, const std::string& thp_mode,
                                            bool by_default);

// Re-executes this binary (its path from /proc/self/exe, so that the process
// keeps its name) with `argv` and the tunable when
// HugePageTunables says so; returns (and the process runs as is) when it does
// not or when exec fails. Call first in main(), before any thread starts.
void ReexecWithHugePageMalloc(char** argv, bool by_default);

}  // namespace onyx
