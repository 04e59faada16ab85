#include "framework/bfc_arena.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onyx {

BFCArena::BFCArena(IAllocator* device, Options options)
    : device_(device), options_(options), bins_(kNumBins), next_region_bytes_(options.initial_chunk_bytes) {}

BFCArena::~BFCArena() {
  absl::MutexLock lock(&mu_);
  for (Region& r : regions_) {
    if (r.live) device_->Free(r.base);
  }
}

std::shared_ptr<void> BFCArena::OwnChunk(void* p) {
  // The deleter frees the chunk before the captured arena reference goes, so
  // the arena outlives its last chunk's Free.
  return std::shared_ptr<void>(p, [arena = this, keep = weak_from_this().lock()](void* q) { arena->Free(q); });
}

int BFCArena::BinFor(size_t bytes) {
  int bin = 0;
  size_t limit = kMinChunk * 2;
  while (bin < kNumBins - 1 && bytes >= limit) {
    ++bin;
    limit <<= 1;
  }
  return bin;
}

int BFCArena::NewChunk() {
  if (!spare_chunks_.empty()) {
    int c = spare_chunks_.back();
    spare_chunks_.pop_back();
    chunks_[c] = Chunk();
    return c;
  }
  chunks_.emplace_back();
  return static_cast<int>(chunks_.size()) - 1;
}

void BFCArena::InsertFree(int c) {
  const Chunk& ch = chunks_[c];
  bins_[BinFor(ch.size)].emplace(std::make_pair(ch.size, reinterpret_cast<uintptr_t>(ch.ptr)), c);
}

void BFCArena::RemoveFree(int c) {
  const Chunk& ch = chunks_[c];
  auto& bin = bins_[BinFor(ch.size)];
  auto range = bin.equal_range(std::make_pair(ch.size, reinterpret_cast<uintptr_t>(ch.ptr)));
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second == c) {
      bin.erase(it);
      return;
    }
  }
}

int BFCArena::FindChunk(size_t bytes, int stream) {
  for (int b = BinFor(bytes); b < kNumBins; ++b) {
    for (auto it = bins_[b].lower_bound({bytes, 0}); it != bins_[b].end(); ++it) {
      const Chunk& ch = chunks_[it->second];
      bool reusable =
          ch.stream < 0 || (stream >= 0 && ch.stream == stream) || stream_epochs_[ch.stream] > ch.freed_epoch;
      if (reusable) return it->second;
    }
  }
  return -1;
}

absl::Status BFCArena::Extend(size_t bytes) {
  size_t size = bytes;
  if (options_.extend_strategy == ExtendStrategy::kNextPowerOfTwo) {
    size = std::max(bytes, next_region_bytes_);
  } else if (regions_.empty()) {
    size = std::max(bytes, options_.initial_chunk_bytes);
  }
  size = (size + kMinChunk - 1) / kMinChunk * kMinChunk;
  if (options_.max_bytes > 0 && reserved_ + size > static_cast<int64_t>(options_.max_bytes)) {
    size = bytes;  // the growth policy would overshoot: take just what is needed
    if (reserved_ + size > static_cast<int64_t>(options_.max_bytes)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("arena ", options_.name.empty() ? std::string() : absl::StrCat("'", options_.name, "' "), "on ",
                       device_->device(), ": allocating ", bytes, " bytes would exceed the limit of ",
                       options_.max_bytes, " bytes (", reserved_, " reserved, ", in_use_, " in use)"));
    }
  }
  auto base = device_->Allocate(size);
  if (!base.ok()) return base.status();
  if (options_.extend_strategy == ExtendStrategy::kNextPowerOfTwo) {
    while (next_region_bytes_ <= size) next_region_bytes_ *= 2;
  }
  regions_.push_back(Region{static_cast<char*>(*base), size, true});
  int c = NewChunk();
  chunks_[c].ptr = static_cast<char*>(*base);
  chunks_[c].size = size;
  chunks_[c].region = static_cast<int>(regions_.size()) - 1;
  InsertFree(c);
  reserved_ += size;
  ++extends_;
  return absl::OkStatus();
}

absl::StatusOr<void*> BFCArena::Allocate(size_t bytes) { return AllocateOnStream(bytes, -1); }

void BFCArena::FailAllocationAfter(int64_t successes) {
  absl::MutexLock lock(&mu_);
  fail_after_ = successes;
}

absl::StatusOr<void*> BFCArena::AllocateOnStream(size_t bytes, int stream) {
  const size_t rounded = std::max(kMinChunk, (bytes + kMinChunk - 1) / kMinChunk * kMinChunk);
  absl::MutexLock lock(&mu_);
  if (fail_after_ >= 0 && fail_after_-- == 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("arena '", options_.name, "': injected allocation failure (", bytes, " bytes)"));
  }
  int c = FindChunk(rounded, stream);
  if (c < 0) {
    absl::Status extended = Extend(rounded);
    if (!extended.ok()) return extended;
    c = FindChunk(rounded, stream);
    if (c < 0) return absl::InternalError("arena: no chunk after extending");
  }
  RemoveFree(c);
  if (chunks_[c].size - rounded >= kMinChunk) {
    int rest = NewChunk();
    Chunk& ch = chunks_[c];
    Chunk& r = chunks_[rest];
    r.ptr = ch.ptr + rounded;
    r.size = ch.size - rounded;
    r.region = ch.region;
    r.prev = c;
    r.next = ch.next;
    r.stream = ch.stream;
    r.freed_epoch = ch.freed_epoch;
    if (ch.next >= 0) chunks_[ch.next].prev = rest;
    ch.next = rest;
    ch.size = rounded;
    InsertFree(rest);
  }
  Chunk& ch = chunks_[c];
  ch.in_use = true;
  ch.requested = bytes;
  ch.stream = stream;
  by_ptr_[ch.ptr] = c;
  in_use_ += static_cast<int64_t>(ch.size);
  peak_ = std::max(peak_, in_use_);
  ++allocations_;
  return static_cast<void*>(ch.ptr);
}

void BFCArena::Merge(int c) {
  auto compatible = [&](const Chunk& a, const Chunk& b) {
    return a.stream < 0 || b.stream < 0 || (a.stream == b.stream && a.freed_epoch == b.freed_epoch);
  };
  // Right disappears into left. A lambda does not inherit Merge's lock
  // requirement: it states it again for the thread-safety analysis.
  auto absorb = [&](int left, int right) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Chunk& l = chunks_[left];
    Chunk& r = chunks_[right];
    l.size += r.size;
    l.next = r.next;
    if (r.next >= 0) chunks_[r.next].prev = left;
    if (l.stream < 0) {
      l.stream = r.stream;
      l.freed_epoch = r.freed_epoch;
    }
    r = Chunk();
    spare_chunks_.push_back(right);
  };
  int next = chunks_[c].next;
  if (next >= 0 && !chunks_[next].in_use && compatible(chunks_[c], chunks_[next])) {
    RemoveFree(next);
    absorb(c, next);
  }
  int prev = chunks_[c].prev;
  if (prev >= 0 && !chunks_[prev].in_use && compatible(chunks_[prev], chunks_[c])) {
    RemoveFree(prev);
    absorb(prev, c);
    c = prev;
  }
  InsertFree(c);
}

void BFCArena::Free(void* p) {
  if (p == nullptr) return;
  absl::MutexLock lock(&mu_);
  auto it = by_ptr_.find(static_cast<char*>(p));
  if (it == by_ptr_.end()) return;  // not ours: programmer error, ignored rather than corrupting bins
  int c = it->second;
  by_ptr_.erase(it);
  Chunk& ch = chunks_[c];
  ch.in_use = false;
  in_use_ -= static_cast<int64_t>(ch.size);
  if (ch.stream >= 0) ch.freed_epoch = stream_epochs_[ch.stream];
  Merge(c);
}

void BFCArena::SynchronizeStream(int stream) {
  absl::MutexLock lock(&mu_);
  ++stream_epochs_[stream];
}

void BFCArena::Shrink() {
  absl::MutexLock lock(&mu_);
  for (size_t r = 0; r < regions_.size(); ++r) {
    Region& region = regions_[r];
    if (!region.live) continue;
    for (size_t c = 0; c < chunks_.size(); ++c) {
      Chunk& ch = chunks_[c];
      if (ch.region != static_cast<int>(r) || ch.in_use || ch.size != region.size) continue;
      RemoveFree(static_cast<int>(c));
      device_->Free(region.base);
      reserved_ -= static_cast<int64_t>(region.size);
      region.live = false;
      ch = Chunk();
      spare_chunks_.push_back(static_cast<int>(c));
      break;
    }
  }
}

BFCArena::Stats BFCArena::StatsLocked() const {
  Stats s;
  s.in_use_bytes = in_use_;
  s.peak_in_use_bytes = peak_;
  s.reserved_bytes = reserved_;
  s.allocations = allocations_;
  s.extends = extends_;
  s.bin_chunks_in_use.assign(kNumBins, 0);
  s.bin_chunks_free.assign(kNumBins, 0);
  for (const Chunk& ch : chunks_) {
    if (ch.region < 0) continue;
    int bin = BinFor(ch.size);
    if (ch.in_use) {
      s.bin_chunks_in_use[bin]++;
    } else {
      s.bin_chunks_free[bin]++;
      s.free_bytes += static_cast<int64_t>(ch.size);
      s.largest_free_block = std::max<int64_t>(s.largest_free_block, ch.size);
    }
  }
  s.fragmentation = s.free_bytes > 0 ? 1.0 - static_cast<double>(s.largest_free_block) / s.free_bytes : 0.0;
  return s;
}

BFCArena::Stats BFCArena::GetStats() const {
  absl::MutexLock lock(&mu_);
  return StatsLocked();
}

std::string BFCArena::DumpMemoryLog() const {
  absl::MutexLock lock(&mu_);
  Stats s = StatsLocked();
  std::string out = absl::StrFormat(
      "arena %s: in use %d B (peak %d B), reserved %d B in %d extends, %d allocations, largest free block "
      "%d B, fragmentation %.3f\n",
      device_->device(), s.in_use_bytes, s.peak_in_use_bytes, s.reserved_bytes, s.extends, s.allocations,
      s.largest_free_block, s.fragmentation);
  std::vector<int64_t> in_use_bytes(kNumBins, 0), free_bytes(kNumBins, 0);
  for (const Chunk& ch : chunks_) {
    if (ch.region < 0) continue;
    (ch.in_use ? in_use_bytes : free_bytes)[BinFor(ch.size)] += static_cast<int64_t>(ch.size);
  }
  for (int b = 0; b < kNumBins; ++b) {
    if (s.bin_chunks_in_use[b] == 0 && s.bin_chunks_free[b] == 0) continue;
    absl::StrAppendFormat(&out, "  bin %2d (>= %d B): in use %d chunks %d B, free %d chunks %d B\n", b,
                          static_cast<int64_t>(kMinChunk) << b, s.bin_chunks_in_use[b], in_use_bytes[b],
                          s.bin_chunks_free[b], free_bytes[b]);
  }
  return out;
}

}  // namespace onyx
