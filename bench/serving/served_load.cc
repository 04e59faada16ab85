#include "bench/serving/served_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpc_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace onyx::bench {
namespace {

using Clock = std::chrono::steady_clock;

size_t WireElementSize(const std::string& datatype) {
  if (datatype == "BOOL" || datatype == "UINT8" || datatype == "INT8") return 1;
  if (datatype == "UINT16" || datatype == "INT16" || datatype == "FP16" || datatype == "BF16") return 2;
  if (datatype == "UINT32" || datatype == "INT32" || datatype == "FP32") return 4;
  if (datatype == "UINT64" || datatype == "INT64" || datatype == "FP64") return 8;
  return 0;  // BYTES has no fixed size
}

// `shape` with its leading -1 (the batch dimension) replaced by `batch`.
absl::StatusOr<std::vector<int64_t>> BatchShape(const std::string& model, const std::string& tensor,
                                                const google::protobuf::RepeatedField<int64_t>& shape,
                                                int64_t batch) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) continue;
    if (i != 0) {
      return absl::InvalidArgumentError(absl::StrCat("model '", model, "' tensor '", tensor,
                                                     "': dimension ", i,
                                                     " is variable; only the batch dimension may be"));
    }
    dims[i] = batch;
  }
  return dims;
}

struct ExpectedOutput {
  std::string name, datatype;
  std::vector<int64_t> shape;
  size_t bytes = 0;
};

// One outstanding call: its context and reply are reused from call to call.
struct Slot {
  std::unique_ptr<grpc::ClientContext> context;
  inference::ModelInferResponse infer_reply;
  inference::ServerLiveResponse live_reply;
  std::unique_ptr<grpc::ClientAsyncResponseReader<inference::ModelInferResponse>> infer_reader;
  std::unique_ptr<grpc::ClientAsyncResponseReader<inference::ServerLiveResponse>> live_reader;
  grpc::Status status;
  Clock::time_point started;
};

class ServedLoad {
 public:
  ServedLoad(const ServedLoadOptions& options, std::unique_ptr<inference::GRPCInferenceService::Stub> stub)
      : options_(options), stub_(std::move(stub)), log_(options.log_capacity) {}

  absl::Status Prepare() {
    if (options_.model.empty()) return absl::OkStatus();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    inference::ModelMetadataRequest request;
    request.set_name(options_.model);
    inference::ModelMetadataResponse metadata;
    grpc::Status status = stub_->ModelMetadata(&context, request, &metadata);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("ModelMetadata('", options_.model, "') on ",
                                                 options_.address, ": ", status.error_message()));
    }
    request_.set_model_name(options_.model);
    uint32_t seed = 12345;
    for (const auto& input : metadata.inputs()) {
      auto dims = BatchShape(options_.model, input.name(), input.shape(), options_.batch);
      if (!dims.ok()) return dims.status();
      const size_t element = WireElementSize(input.datatype());
      if (element == 0) {
        return absl::InvalidArgumentError(absl::StrCat("model '", options_.model, "' input '", input.name(),
                                                       "': datatype ", input.datatype(),
                                                       " is not supported by this benchmark"));
      }
      auto* tensor = request_.add_inputs();
      tensor->set_name(input.name());
      tensor->set_datatype(input.datatype());
      int64_t count = 1;
      for (int64_t d : *dims) {
        tensor->add_shape(d);
        count *= d;
      }
      std::string* raw = request_.add_raw_input_contents();
      raw->resize(static_cast<size_t>(count) * element);
      if (input.datatype() == "FP32") {
        // Deterministic values in [-1, 1): the model does real work on them.
        for (int64_t i = 0; i < count; ++i) {
          seed = seed * 1664525u + 1013904223u;
          const float v = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
          std::memcpy(raw->data() + i * 4, &v, 4);
        }
      }
    }
    for (const auto& output : metadata.outputs()) {
      auto dims = BatchShape(options_.model, output.name(), output.shape(), options_.batch);
      if (!dims.ok()) return dims.status();
      ExpectedOutput expected{output.name(), output.datatype(), *dims, WireElementSize(output.datatype())};
      for (int64_t d : *dims) expected.bytes *= static_cast<size_t>(d);
      expected_.push_back(std::move(expected));
    }
    return absl::OkStatus();
  }

  LoadSummary Run() {
    const int concurrency = std::max(1, options_.concurrency);
    slots_.resize(static_cast<size_t>(concurrency));
    outstanding_ = concurrency;
    const Clock::time_point begin = Clock::now();
    window_start_ = begin + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options_.warmup_s));
    window_end_ = window_start_ + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.seconds));
    for (Slot& slot : slots_) Start(&slot);
    std::vector<std::thread> threads;
    for (int t = 0; t < std::max(1, options_.client_threads); ++t) {
      threads.emplace_back([this] { Reap(); });
    }
    for (std::thread& thread : threads) thread.join();
    LoadSummary summary = Summarize(log_, options_.model.empty() ? 0 : options_.batch,
                                    std::chrono::duration<double>(window_end_ - window_start_).count());
    summary.errors = errors_.load();
    summary.first_error = first_error_;
    return summary;
  }

 private:
  void Start(Slot* slot) {
    slot->context = std::make_unique<grpc::ClientContext>();
    slot->started = Clock::now();
    if (options_.model.empty()) {
      slot->live_reader = stub_->PrepareAsyncServerLive(slot->context.get(), live_request_, &queue_);
      slot->live_reader->StartCall();
      slot->live_reader->Finish(&slot->live_reply, &slot->status, slot);
    } else {
      slot->infer_reader = stub_->PrepareAsyncModelInfer(slot->context.get(), request_, &queue_);
      slot->infer_reader->StartCall();
      slot->infer_reader->Finish(&slot->infer_reply, &slot->status, slot);
    }
  }

  void Reap() {
    void* tag = nullptr;
    bool ok = false;
    while (queue_.Next(&tag, &ok)) {
      const Clock::time_point now = Clock::now();
      Slot* slot = static_cast<Slot*>(tag);
      std::string problem = ok ? Check(*slot) : "completion queue reported failure";
      if (!problem.empty()) {
        if (errors_.fetch_add(1) == 0) {
          std::lock_guard<std::mutex> lock(error_mu_);
          first_error_ = problem;
        }
      } else if (now >= window_start_ && now <= window_end_) {
        log_.Add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - slot->started).count());
      }
      if (now < window_end_) {
        Start(slot);
      } else if (outstanding_.fetch_sub(1) == 1) {
        queue_.Shutdown();
      }
    }
  }

  // "" when the reply is well-formed, else what is wrong with it.
  std::string Check(const Slot& slot) const {
    if (!slot.status.ok()) {
      return absl::StrCat("rpc failed: code ", static_cast<int>(slot.status.error_code()), ": ",
                          slot.status.error_message());
    }
    if (options_.model.empty()) return slot.live_reply.live() ? "" : "ServerLive answered live=false";
    const inference::ModelInferResponse& reply = slot.infer_reply;
    if (reply.model_name() != options_.model) {
      return absl::StrCat("reply names model '", reply.model_name(), "', expected '", options_.model, "'");
    }
    if (reply.outputs_size() != static_cast<int>(expected_.size()) ||
        reply.raw_output_contents_size() != reply.outputs_size()) {
      return absl::StrCat("reply has ", reply.outputs_size(), " outputs and ",
                          reply.raw_output_contents_size(), " raw contents, expected ", expected_.size());
    }
    for (int i = 0; i < reply.outputs_size(); ++i) {
      const auto& out = reply.outputs(i);
      const ExpectedOutput* want = nullptr;
      for (const ExpectedOutput& e : expected_) {
        if (e.name == out.name()) want = &e;
      }
      if (want == nullptr) return absl::StrCat("reply has unknown output '", out.name(), "'");
      if (out.datatype() != want->datatype ||
          !std::equal(out.shape().begin(), out.shape().end(), want->shape.begin(), want->shape.end()) ||
          reply.raw_output_contents(i).size() != want->bytes) {
        return absl::StrCat("output '", out.name(), "': ", out.datatype(), " with ", out.shape_size(),
                            " dims and ", reply.raw_output_contents(i).size(), " bytes, expected ",
                            want->datatype, " with ", want->shape.size(), " dims and ", want->bytes,
                            " bytes");
      }
    }
    return "";
  }

  const ServedLoadOptions options_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  inference::ModelInferRequest request_;
  const inference::ServerLiveRequest live_request_;
  std::vector<ExpectedOutput> expected_;
  grpc::CompletionQueue queue_;
  std::vector<Slot> slots_;
  std::atomic<int> outstanding_{0};
  Clock::time_point window_start_, window_end_;
  LatencyLog log_;
  std::atomic<int64_t> errors_{0};
  std::mutex error_mu_;
  std::string first_error_;
};

}  // namespace

absl::StatusOr<LoadSummary> RunServedLoad(const ServedLoadOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(1 << 30);  // replies of large batches
  auto channel = grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", options.address));
  }
  ServedLoad load(options, inference::GRPCInferenceService::NewStub(channel));
  if (absl::Status status = load.Prepare(); !status.ok()) return status;
  return load.Run();
}

}  // namespace onyx::bench
