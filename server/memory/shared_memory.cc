#include "server/memory/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx::server {

SharedMemoryRegion::SharedMemoryRegion(SharedMemoryInfo info, void* mapping,
                                       uint64_t mapped_size)
    : info_(std::move(info)), mapping_(mapping), mapped_size_(mapped_size) {}

SharedMemoryRegion::~SharedMemoryRegion() { munmap(mapping_, mapped_size_); }

absl::StatusOr<absl::Span<uint8_t>> SharedMemoryRegion::Slice(uint64_t offset,
                                                               uint64_t size) const {
  if (offset > info_.byte_size || size > info_.byte_size - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("shared memory region '", info_.name, "': bytes [", offset, ", ",
                     offset + size, ") exceed its byte_size ", info_.byte_size));
  }
  uint8_t* base = static_cast<uint8_t*>(mapping_) + info_.offset;
  return absl::Span<uint8_t>(base + offset, size);
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
    return absl::NotFoundError(absl::StrCat("unable to open shared memory key '", key,
                                            "': ", std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset ||
      static_cast<uint64_t>(st.st_size) - offset < byte_size) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("shared memory key '", key, "' holds ", st.st_size, " bytes; offset ",
                     offset, " + byte_size ", byte_size, " do not fit"));
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
