// Shared parts of the recurrent kernels (RNN, GRU, LSTM): attributes,
// activation functions, input checking, and layout conversion.
//
//   ASSIGN_OR_RETURN(RnnAttributes attrs, RnnAttributes::FromInfo(info, 2, {"Sigmoid", "Tanh"}));
//   ASSIGN_OR_RETURN(RnnInputs in, ReadRnnInputs(ctx, attrs, /*gates=*/3));
//   ... run each direction over in.x [seq, batch, input] ...
//   RETURN_IF_ERROR(WriteRnnOutputs(ctx, attrs, in, y, {&y_h}));
//
// Everything computes in float, or double when X is double; inputs are
// converted on read (float16/bfloat16 included).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"
#include "onyx/tensor.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {

struct RnnActivation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  float alpha = 0.f;
  float beta = 0.f;

  // Applies the function to v[0, n) in place.
  template <typename T>
  void Apply(T* v, int64_t n) const;
};

struct RnnAttributes {
  int num_directions = 1;
  bool reverse = false;  // direction == "reverse"
  int64_t hidden_size = 0;
  float clip = 0.f;                        // 0: no clipping
  int64_t layout = 0;                      // 1: batch-major X, Y, states
  int per_direction = 1;                   // activations per direction
  std::vector<RnnActivation> activations;  // per_direction * num_directions

  // Reads direction, hidden_size, clip, layout and activations (with their
  // alpha/beta), applying `defaults` per direction when absent.
  static absl::StatusOr<RnnAttributes> FromInfo(const OpKernelInfo& info, int per_direction,
                                                const std::vector<std::string>& defaults);
  const RnnActivation& activation(int direction, int index) const {
    return activations[direction * per_direction + index];
  }
};

struct RnnInputs {
  DataType compute_type = DataType::kFloat;  // kFloat or kDouble
  int64_t seq = 0, batch = 0, input_size = 0, hidden = 0;
  Tensor x;                       // [seq, batch, input]
  Tensor w;                       // [dirs, gates * hidden, input]
  Tensor r;                       // [dirs, gates * hidden, hidden]
  Tensor b;                       // [dirs, 2 * gates * hidden], zeros when absent
  Tensor initial_h;               // [dirs, batch, hidden], zeros when absent
  std::vector<int64_t> seq_lens;  // per batch entry, `seq` when absent
};

// Validates and converts inputs 0..5 (X, W, R, B, sequence_lens, initial_h).
absl::StatusOr<RnnInputs> ReadRnnInputs(const OpKernelContext& ctx, const RnnAttributes& attrs, int gates);

// Converts an optional state input ([dirs, batch, hidden], or batch-major with
// layout 1) into [dirs, batch, hidden] of the compute type; zeros when absent.
absl::StatusOr<Tensor> ReadRnnState(const OpKernelContext& ctx, int input, const RnnAttributes& attrs,
                                    const RnnInputs& in, const char* name);

// Writes Y (from y [seq, dirs, batch, hidden]) and the final states (each
// [dirs, batch, hidden]) to outputs 0, 1, 2..., in the attribute layout and the
// type of X. Outputs that are not requested are skipped.
absl::Status WriteRnnOutputs(OpKernelContext& ctx, const RnnAttributes& attrs, const RnnInputs& in, const Tensor& y,
                             const std::vector<const Tensor*>& states);

// Precomputes X * W[d]^T + Wb[d] for every time step: out [seq * batch,
// gates * hidden]. Rb[d] is added too for the first `recurrent_bias_gates`
// gates (those whose recurrent bias is not applied separately).
template <typename T>
absl::Status InputProjection(const RnnInputs& in, int direction, int gates, int recurrent_bias_gates,
                             std::unique_ptr<T[]>& out);

// Clips v[0, n) to [-clip, clip] when clip > 0.
template <typename T>
inline void ClipValues(T* v, int64_t n, float clip) {
  if (clip <= 0.f) return;
  const T c = static_cast<T>(clip);
  for (int64_t i = 0; i < n; ++i) v[i] = std::min(std::max(v[i], -c), c);
}

// The time index of step `step` for a sequence of `length` (reverse
// directions walk each sequence from its own end).
inline int64_t RnnTimeIndex(bool reverse, int64_t step, int64_t length) { return reverse ? length - 1 - step : step; }

// fn(d) for every direction; the two of a bidirectional layer run on two
// threads when the session has them (each owns its scratch and writes only
// its own slices of Y, Y_h and Y_c). The first error is returned.
absl::Status ForEachDirection(int directions, const std::function<absl::Status(int)>& fn);

// The recurrent weights of every direction split into gate blocks (LSTM: one
// block of 4h rows; GRU: the z/r rows and the h rows), each packed for
// simd::PanelProduct once at kernel creation when R is a float initializer;
// empty otherwise (the kernel packs per run).
using RecurrentBlocks = std::vector<std::vector<std::vector<float>>>;  // [direction][block]
inline RecurrentBlocks PackConstantR(const OpKernelInfo& info, const std::vector<int64_t>& block_rows) {
  const Tensor* r = info.ConstantInput(2);
  if (r == nullptr || r->type() != DataType::kFloat || r->rank() != 3) return {};
  int64_t rows = 0;
  for (int64_t b : block_rows) rows += b;
  const int64_t h = r->dims()[2];
  if (r->dims()[1] != rows * h) return {};
  RecurrentBlocks out(r->dims()[0]);
  for (int64_t d = 0; d < r->dims()[0]; ++d) {
    const float* base = r->data<float>() + d * rows * h * h;
    for (int64_t b : block_rows) {
      out[d].push_back(simd::PackPanels(base, b * h, h, h));
      base += b * h * h;
    }
  }
  return out;
}

// One gate block of one direction's R, rows [n, h], and the per-step product
// out[batch, n] = state[batch, h] x blockᵀ: float at batch <= 8 through
// simd::PanelProduct on the block's panels (those made at kernel creation,
// or packed here), where a general GEMM call costs twice as much per step;
// else a GEMM reading the rows in place.
template <typename T>
class RecurrentBlock {
 public:
  static constexpr int64_t kPanelBatch = 8;

  RecurrentBlock(const T* rows, int64_t n, int64_t h, int64_t batch, const std::vector<float>* packed)
      : rows_(rows), n_(n), h_(h), batch_(batch) {
    if constexpr (std::is_same_v<T, float>) {
      if (batch <= kPanelBatch) {
        if (packed == nullptr) own_ = simd::PackPanels(rows, n, h, h);
        panels_ = packed != nullptr ? packed->data() : own_.data();
      }
    }
  }

  absl::Status Product(const T* state, T* out) const {
    if constexpr (std::is_same_v<T, float>) {
      if (panels_ != nullptr) {
        simd::PanelProduct(batch_, n_, h_, state, h_, panels_, out, n_);
        return absl::OkStatus();
      }
    }
    return GemmAny<T>(false, true, batch_, n_, h_, state, h_, rows_, h_, false, out, n_);
  }

 private:
  const T* rows_;
  int64_t n_, h_, batch_;
  std::vector<float> own_;
  const float* panels_ = nullptr;
};

}  // namespace onyx
