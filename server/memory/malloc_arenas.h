// How many malloc arenas the C library may create, set once at startup.
//
// glibc gives a thread that finds the arenas busy one of its own (up to eight
// per CPU) and hands a freed page back to the system only from an arena's top.
// A model version is built on the loading thread and freed by whichever thread
// drops it last, so under traffic each reload strands pages below the live
// blocks of arenas that no other thread allocates from: RSS grew ~140 KB per
// reload of a small MLP with nothing leaked. With few arenas, the next load
// reuses those pages (6 KB per reload with one arena), with no heap release
// (models/heap_release.h), which holds each arena's lock while it hands every
// free chunk back (up to 99 ms measured), for small reloads.
//
//   std::optional<int> arenas = LimitMallocArenas(kDefaultMallocArenas);  // first line of main()
//
// MALLOC_ARENA_MAX (or glibc.malloc.arena_max in GLIBC_TUNABLES) in the
// environment wins: glibc has applied it, and this leaves it as it is.
#pragma once

#include <optional>

namespace onyx::server {

inline constexpr int kDefaultMallocArenas = 2;

// The limit this call set; nullopt when the environment chose one, or the C
// library is not glibc. Call before any thread starts: arenas already made
// stay.
std::optional<int> LimitMallocArenas(int arenas);

}  // namespace onyx::server
