// TraceWriter: --trace FILE, one CSV line per completed request, streamed to
// disk through per-thread buffers so that no request's data stays in memory.
//
//   ASSIGN_OR_RETURN(auto trace, TraceWriter::Open("run.csv", model_names, run_t0_ns));
//   TraceWriter::Buffer buf(trace.get());            // one per recording thread
//   buf.Add(level, model, intended, sent, done, code);
//
// Columns: level, model, intended_us, sent_us, done_us (from the run's start),
// response_us, service_us, code. Thread-safe: buffers flush whole lines
// under the writer's lock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace onyx::load {

class TraceWriter {
 public:
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Open(const std::string& path, std::vector<std::string> models,
                                                           int64_t t0_ns);
  ~TraceWriter();

  class Buffer {
   public:
    explicit Buffer(TraceWriter* writer) : writer_(writer) { text_.reserve(kFlushBytes + 256); }
    ~Buffer() { Flush(); }
    void Add(int level, int model, int64_t intended_ns, int64_t sent_ns, int64_t done_ns, int code);
    void Flush();

   private:
    static constexpr size_t kFlushBytes = 1 << 16;
    TraceWriter* writer_;
    std::string text_;
  };

 private:
  TraceWriter(FILE* file, std::vector<std::string> models, int64_t t0_ns)
      : file_(file), models_(std::move(models)), t0_ns_(t0_ns) {}
  void Write(const std::string& text);

  absl::Mutex mu_;
  FILE* file_;
  const std::vector<std::string> models_;
  const int64_t t0_ns_;
};

}  // namespace onyx::load
