// Returns the heap's free pages to the operating system.
//
// A session's graph, kernels and weights are allocated by the loading thread
// and freed by whichever thread drops the last reference; the C library keeps
// such memory in per-thread arenas and only gives back what sits at an arena's
// top. Without a release after each unload, a server that reloads models under
// traffic grows its RSS by what fragmentation strands (about 140 KB per reload
// of a small MLP), although nothing leaks. Called once a version has drained,
// off the request path: it walks every arena and holds each arena's lock
// briefly.
#ifndef ONYX_SERVER_MODELS_HEAP_RELEASE_H_
#define ONYX_SERVER_MODELS_HEAP_RELEASE_H_

namespace onyx::server {

// Whether freed pages went back to the system (false where the C library has
// no such call, or none could be released).
bool ReleaseFreedHeap();

}  // namespace onyx::server

#endif  // ONYX_SERVER_MODELS_HEAP_RELEASE_H_
