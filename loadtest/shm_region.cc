#include "loadtest/shm_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onyx::load {

absl::StatusOr<std::unique_ptr<ShmRegion>> ShmRegion::Create(std::string key, size_t size) {
  const auto fail = [&](const char* what) {
    return absl::InternalError(
        absl::StrCat("--shm system: ", what, " '", key, "' (", size, " bytes): ", std::strerror(errno)));
  };
  size = std::max<size_t>(size, 1);
  const int fd = shm_open(key.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (fd < 0) return fail("shm_open");
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    shm_unlink(key.c_str());
    return fail("ftruncate");
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(key.c_str());
    return fail("mmap");
  }
  return std::unique_ptr<ShmRegion>(new ShmRegion(std::move(key), static_cast<char*>(p), size));
}

ShmRegion::~ShmRegion() {
  munmap(data_, size_);
  shm_unlink(key_.c_str());
}

}  // namespace onyx::load
