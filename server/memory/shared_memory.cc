#include "server/memory/shared_memory.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx::server {

namespace {

// The copy this thread is inside, if any: where SIGBUS jumps back to.
// Volatile, and fenced below: the handler reads it asynchronously, so the
// compiler must neither drop nor move the stores around the copy.
thread_local sigjmp_buf* volatile t_copy_guard = nullptr;
struct sigaction g_previous_sigbus;

void OnSigbus(int, siginfo_t*, void*) {
  if (t_copy_guard != nullptr) siglongjmp(*t_copy_guard, 1);
  // Not a guarded copy: restore what was there before; the faulting access
  // runs again and gets that behaviour (by default, the process ends).
  sigaction(SIGBUS, &g_previous_sigbus, nullptr);
}

void InstallSigbusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

// memcpy that returns false instead of dying when a page of the mapping is
// gone (the object was truncated under it).
bool GuardedCopy(void* dst, const void* src, size_t n) {
  InstallSigbusHandler();
  sigjmp_buf back;
  if (sigsetjmp(back, /*savemask=*/1) != 0) {
    t_copy_guard = nullptr;
    return false;
  }
  t_copy_guard = &back;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(dst, src, n);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_copy_guard = nullptr;
  return true;
}

}  // namespace

SharedMemoryRegion::SharedMemoryRegion(SharedMemoryInfo info, void* mapping, uint64_t mapped_size)
    : info_(std::move(info)), mapping_(mapping), mapped_size_(mapped_size) {}

SharedMemoryRegion::~SharedMemoryRegion() { munmap(mapping_, mapped_size_); }

absl::StatusOr<absl::Span<uint8_t>> SharedMemoryRegion::Slice(uint64_t offset,
                                                              uint64_t size) const {
  if (offset > info_.byte_size || size > info_.byte_size - offset) {
    return absl::InvalidArgumentError(absl::StrCat("shared memory region '", info_.name,
                                                   "': bytes [", offset, ", ", offset + size,
                                                   ") exceed its byte_size ", info_.byte_size));
  }
  uint8_t* base = static_cast<uint8_t*>(mapping_) + info_.offset;
  return absl::Span<uint8_t>(base + offset, size);
}

absl::Status SharedMemoryRegion::ReadInto(uint64_t offset, uint64_t size, void* dst) const {
  absl::StatusOr<absl::Span<uint8_t>> bytes = Slice(offset, size);
  if (!bytes.ok()) return bytes.status();
  if (size == 0 || GuardedCopy(dst, bytes->data(), size)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("shared memory region '", info_.name, "': bytes [", offset, ", ", offset + size,
                   ") are gone (its shared memory object was truncated after it was "
                   "registered)"));
}

absl::Status SharedMemoryRegion::WriteFrom(uint64_t offset, const void* src, uint64_t size) const {
  absl::StatusOr<absl::Span<uint8_t>> bytes = Slice(offset, size);
  if (!bytes.ok()) return bytes.status();
  if (size == 0 || GuardedCopy(bytes->data(), src, size)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("shared memory region '", info_.name, "': bytes [", offset, ", ", offset + size,
                   ") are gone (its shared memory object was truncated after it was "
                   "registered)"));
}

absl::Status SharedMemoryRegistry::Register(const std::string& name, const std::string& key,
                                            uint64_t offset, uint64_t byte_size) {
  if (name.empty() || key.empty() || byte_size == 0) {
    return absl::InvalidArgumentError(
        "shared memory registration needs a name, a key and a non-zero byte_size");
  }
  {
    absl::MutexLock lock(&mu_);
    if (regions_.contains(name)) {
      return absl::AlreadyExistsError(
          absl::StrCat("shared memory region '", name, "' is already registered"));
    }
  }
  const std::string shm_key = key[0] == '/' ? key : "/" + key;
  const int fd = shm_open(shm_key.c_str(), O_RDWR, 0);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("unable to open shared memory key '", key, "': ", std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset ||
      static_cast<uint64_t>(st.st_size) - offset < byte_size) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("shared memory key '", key, "' holds ",
                                                   st.st_size, " bytes; offset ", offset,
                                                   " + byte_size ", byte_size, " do not fit"));
  }
  const uint64_t mapped_size = offset + byte_size;
  void* mapping = mmap(nullptr, mapped_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) {
    return absl::InternalError(
        absl::StrCat("cannot map shared memory key '", key, "': ", std::strerror(errno)));
  }
  SharedMemoryInfo info{name, key, offset, byte_size};
  std::shared_ptr<const SharedMemoryRegion> region(
      new SharedMemoryRegion(std::move(info), mapping, mapped_size));
  absl::MutexLock lock(&mu_);
  if (!regions_.emplace(name, std::move(region)).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("shared memory region '", name, "' is already registered"));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Unregister(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  if (name.empty()) {
    regions_.clear();
    return absl::OkStatus();
  }
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("no shared memory region '", name, "'"));
  }
  regions_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> SharedMemoryRegistry::Get(
    absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("no shared memory region '", name, "'"));
  }
  return it->second;
}

absl::StatusOr<std::vector<SharedMemoryInfo>> SharedMemoryRegistry::Status(
    absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  std::vector<SharedMemoryInfo> out;
  for (const auto& [region_name, region] : regions_) {
    if (name.empty() || region_name == name) out.push_back(region->info());
  }
  if (!name.empty() && out.empty()) {
    return absl::NotFoundError(absl::StrCat("no shared memory region '", name, "'"));
  }
  return out;
}

}  // namespace onyx::server
