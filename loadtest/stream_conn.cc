#include "loadtest/stream_conn.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "loadtest/clock.h"
#include "loadtest/worker.h"

namespace onyx::load {
namespace {

using WF = google::protobuf::internal::WireFormatLite;

// id (ModelInferResponse field 3, inside field 2) and error_message (field 1)
// of a ModelStreamInferResponse, without parsing the outputs.
bool ParseReply(const grpc::ByteBuffer& reply, std::string* scratch, uint64_t* id, std::string* error) {
  std::vector<grpc::Slice> slices;
  if (!reply.Dump(&slices).ok()) return false;
  scratch->clear();
  for (const grpc::Slice& s : slices) scratch->append(reinterpret_cast<const char*>(s.begin()), s.size());
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(scratch->data()),
                                            static_cast<int>(scratch->size()));
  std::string id_text;
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (tag == WF::MakeTag(1, WF::WIRETYPE_LENGTH_DELIMITED)) {
      if (!WF::ReadString(&in, error)) return false;
    } else if (tag == WF::MakeTag(2, WF::WIRETYPE_LENGTH_DELIMITED)) {
      uint32_t len;
      if (!in.ReadVarint32(&len)) return false;
      const auto limit = in.PushLimit(static_cast<int>(len));
      for (uint32_t inner = in.ReadTag(); inner != 0; inner = in.ReadTag()) {
        if (inner == WF::MakeTag(3, WF::WIRETYPE_LENGTH_DELIMITED)) {
          if (!WF::ReadString(&in, &id_text)) return false;
        } else if (!WF::SkipField(&in, inner)) {
          return false;
        }
      }
      in.PopLimit(limit);
    } else if (!WF::SkipField(&in, tag)) {
      return false;
    }
  }
  return absl::SimpleAtoi(id_text, id);
}

// The bytes of field 3 (id) holding `id` in decimal.
std::string IdField(uint64_t id) {
  const std::string digits = absl::StrCat(id);
  std::string out;
  out.push_back(static_cast<char>(WF::MakeTag(3, WF::WIRETYPE_LENGTH_DELIMITED)));
  out.push_back(static_cast<char>(digits.size()));  // < 128: one varint byte
  out += digits;
  return out;
}

}  // namespace

StreamConn::StreamConn(Worker* worker, grpc::GenericStub* stub, std::string method, grpc::CompletionQueue* cq)
    : worker_(worker), stub_(stub), method_(std::move(method)), cq_(cq), slots_(kSlots) {}

StreamConn::~StreamConn() = default;

void StreamConn::Open() {
  stream_ = stub_->PrepareCall(&context_, method_, cq_);
  stream_->StartCall(&started_);
}

void StreamConn::OnStarted(bool ok) {
  if (!ok) {
    {
      absl::MutexLock lock(&mu_);
      broken_ = true;
    }
    stream_->Finish(&status_, &finished_);
    return;
  }
  peer_ = context_.peer();
  absl::MutexLock lock(&mu_);
  ready_ = true;
  stream_->Read(&reply_, &read_);
  if (!queue_.empty() && !writing_) {
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    IssueWrite(std::move(q));
  }
}

void StreamConn::Write(const Pending& p, const std::string& bytes, ThreadStats* stats) {
  const int64_t now = NowNs();
  int code = 0;
  std::string why;
  {
    absl::MutexLock lock(&mu_);
    if (broken_ || closing_) {
      code = grpc::StatusCode::UNAVAILABLE;
      why = broken_reason_.empty() ? "stream closed" : broken_reason_;
    } else {
      const uint64_t id = next_id_++;
      Slot& slot = slots_[id % kSlots];
      if (slot.used) {
        code = grpc::StatusCode::RESOURCE_EXHAUSTED;
        why = absl::StrCat("onyx-load: more than ", kSlots, " requests outstanding on one stream");
      } else {
        slot = {true, p, now};
        grpc::Slice parts[2] = {grpc::Slice(bytes.data(), bytes.size(), grpc::Slice::STATIC_SLICE),
                                grpc::Slice(IdField(id))};
        Queued q{id, grpc::ByteBuffer(parts, 2)};
        if (ready_ && !writing_) {
          IssueWrite(std::move(q));
        } else {
          queue_.push_back(std::move(q));
        }
        PhaseContext* phase = worker_->phase();
        if (phase != nullptr && phase->InSpan(p.level, now)) stats->RecordSentInSpan(p.level, p.model);
        return;
      }
    }
  }
  worker_->Complete(p, now, now, code, why, "", nullptr, true, stats);
}

void StreamConn::IssueWrite(Queued q) {
  writing_ = true;
  slots_[q.id % kSlots].sent_ns = NowNs();
  stream_->Write(q.buffer, &written_);
}

void StreamConn::OnWritten(bool ok) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
  if (!ok) return;  // the read side sees the stream end and fails what is outstanding
  if (!queue_.empty()) {
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    IssueWrite(std::move(q));
  }
}

void StreamConn::OnRead(bool ok) {
  if (!ok) {
    stream_->Finish(&status_, &finished_);
    return;
  }
  const int64_t now = NowNs();
  static thread_local std::string scratch;
  uint64_t id = 0;
  std::string error;
  Slot slot;
  bool known = false;
  if (ParseReply(reply_, &scratch, &id, &error)) {
    absl::MutexLock lock(&mu_);
    Slot& s = slots_[id % kSlots];
    if (s.used) {
      slot = s;
      s.used = false;
      known = true;
    }
  }
  if (known) {
    // ModelStreamInfer carries a message but no status code for a failed request.
    worker_->Complete(slot.pending, slot.sent_ns, now, error.empty() ? 0 : grpc::StatusCode::UNKNOWN, error, peer_,
                      &reply_, true, worker_->reaper_stats_for_streams());
  }
  reply_.Clear();
  stream_->Read(&reply_, &read_);
}

void StreamConn::OnWritesDone(bool) {}

void StreamConn::OnFinished(bool) {
  FailAll(status_.ok() ? "stream ended by the server" : absl::StrCat("stream failed: ", status_.error_message()));
  closed_ = true;
}

void StreamConn::FailAll(const std::string& why) {
  std::vector<Slot> failed;
  {
    absl::MutexLock lock(&mu_);
    broken_ = true;
    broken_reason_ = why;
    for (Slot& s : slots_) {
      if (!s.used) continue;
      failed.push_back(s);
      s.used = false;
    }
    queue_.clear();
  }
  const int code = status_.ok() ? grpc::StatusCode::UNAVAILABLE : status_.error_code();
  const int64_t now = NowNs();
  for (const Slot& s : failed) {
    worker_->Complete(s.pending, s.sent_ns, now, code, why, peer_, nullptr, true, worker_->reaper_stats_for_streams());
  }
}

void StreamConn::Close() {
  absl::MutexLock lock(&mu_);
  closing_ = true;
  if (!ready_ || broken_) {
    context_.TryCancel();
    return;
  }
  stream_->WritesDone(&writes_done_);
}

}  // namespace onyx::load
