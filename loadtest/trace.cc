#include "loadtest/trace.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onyx::load {

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Open(const std::string& path, std::vector<std::string> models,
                                                               int64_t t0_ns) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--trace: cannot write '", path, "': ", std::strerror(errno)));
  }
  std::fputs("level,model,intended_us,sent_us,done_us,response_us,service_us,code\n", f);
  return std::unique_ptr<TraceWriter>(new TraceWriter(f, std::move(models), t0_ns));
}

TraceWriter::~TraceWriter() { std::fclose(file_); }

void TraceWriter::Write(const std::string& text) {
  absl::MutexLock lock(&mu_);
  std::fwrite(text.data(), 1, text.size(), file_);
}

void TraceWriter::Buffer::Add(int level, int model, int64_t intended_ns, int64_t sent_ns, int64_t done_ns, int code) {
  const int64_t t0 = writer_->t0_ns_;
  absl::StrAppendFormat(&text_, "%d,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%d\n", level, writer_->models_[model],
                        (intended_ns - t0) / 1e3, (sent_ns - t0) / 1e3, (done_ns - t0) / 1e3,
                        (done_ns - intended_ns) / 1e3, (done_ns - sent_ns) / 1e3, code);
  if (text_.size() >= kFlushBytes) Flush();
}

void TraceWriter::Buffer::Flush() {
  if (text_.empty()) return;
  writer_->Write(text_);
  text_.clear();
}

}  // namespace onyx::load
