// Shared parts of the recurrent kernels (RNN, GRU, LSTM): attributes,
// activation functions, input checking, and layout conversion.
//
//   ASSIGN_OR_RETURN(RnnAttributes attrs, RnnAttributes::FromInfo(info, 2, {"Sigmoid", "Tanh"}));
//   ASSIGN_OR_RETURN(RnnInputs in, ReadRnnInputs(ctx, attrs, /*gates=*/3));
//   RnnOutputY<float> y;
//   RETURN_IF_ERROR(y.Open(ctx, attrs, in));
//   ... run each direction over the rows in.XRow(t, b), writing y.Row(t, d, b) ...
//   RETURN_IF_ERROR(y.Finish(ctx));
//   RETURN_IF_ERROR(WriteRnnStates(ctx, attrs, in, {&y_h}));
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

// Y's order: ONNX's layout 0 and 1, and the order the com.onyx forms written
// by FuseRecurrentTransposes produce, that of Transpose(Y, [0, 2, 1, 3]).
enum class RnnYLayout : int64_t { kSeqDirBatch = 0, kBatchSeqDir = 1, kSeqBatchDir = 2 };

struct RnnAttributes {
  int num_directions = 1;
  bool reverse = false;  // direction == "reverse"
  int64_t hidden_size = 0;
  float clip = 0.f;    // 0: no clipping
  int64_t layout = 0;  // 1: batch-major X, Y, states
  // Where X is read and Y written: `layout` sets both; the com.onyx forms
  // set them apart with x_layout (0, 1) and y_layout (RnnYLayout).
  bool x_batch_major = false;  // X [batch, seq, input]
  RnnYLayout y_layout = RnnYLayout::kSeqDirBatch;
  int per_direction = 1;                   // activations per direction
  std::vector<RnnActivation> activations;  // per_direction * num_directions

  // Reads direction, hidden_size, clip, layout and activations (with their
  // alpha/beta), applying `defaults` per direction when absent; x_layout and
  // y_layout on com.onyx nodes.
  static absl::StatusOr<RnnAttributes> FromInfo(const OpKernelInfo& info, int per_direction,
                                                const std::vector<std::string>& defaults);
  const RnnActivation& activation(int direction, int index) const {
    return activations[direction * per_direction + index];
  }
};

struct RnnInputs {
  DataType compute_type = DataType::kFloat;  // kFloat or kDouble
  int64_t seq = 0, batch = 0, input_size = 0, hidden = 0;
  bool x_batch_major = false;
  Tensor x;                       // [seq, batch, input], or [batch, seq, input] when x_batch_major
  Tensor w;                       // [dirs, gates * hidden, input]
  Tensor r;                       // [dirs, gates * hidden, hidden]
  Tensor b;                       // [dirs, 2 * gates * hidden], zeros when absent
  Tensor initial_h;               // [dirs, batch, hidden], zeros when absent
  std::vector<int64_t> seq_lens;  // per batch entry, `seq` when absent

  // The row of X (and of its input projection) holding time t of entry b.
  int64_t XRow(int64_t t, int64_t b) const { return x_batch_major ? b * seq + t : t * batch + b; }
  bool AllFullLength() const {
    return std::all_of(seq_lens.begin(), seq_lens.end(), [&](int64_t n) { return n == seq; });
  }
};

// Validates and converts inputs 0..5 (X, W, R, B, sequence_lens, initial_h).
absl::StatusOr<RnnInputs> ReadRnnInputs(const OpKernelContext& ctx, const RnnAttributes& attrs, int gates);

// Converts an optional state input ([dirs, batch, hidden], or batch-major with
// layout 1) into [dirs, batch, hidden] of the compute type; zeros when absent.
absl::StatusOr<Tensor> ReadRnnState(const OpKernelContext& ctx, int input, const RnnAttributes& attrs,
                                    const RnnInputs& in, const char* name);

// Y as the kernels write it, in the attributes' Y layout: straight into
// output 0 when X's type is the compute type, else into a compute-type tensor
// that Finish converts. Row() is null when Y is not requested. Rows past an
// entry's sequence length are zeros.
template <typename T>
class RnnOutputY {
 public:
  absl::Status Open(OpKernelContext& ctx, const RnnAttributes& attrs, const RnnInputs& in);
  T* Row(int64_t t, int64_t d, int64_t b) const {
    return base_ == nullptr ? nullptr : base_ + t * time_stride_ + d * dir_stride_ + b * batch_stride_;
  }
  // Converts the staged rows into output 0 (nothing to do when they are it).
  absl::Status Finish(OpKernelContext& ctx) const;

 private:
  Dims dims_;
  Tensor staging_;  // empty when the rows are output 0's own
  T* base_ = nullptr;
  int64_t time_stride_ = 0, dir_stride_ = 0, batch_stride_ = 0;
};

// Writes the final states (each [dirs, batch, hidden]) to outputs 1, 2...,
// in the attribute layout and the type of X. Outputs that are not requested
// are skipped.
absl::Status WriteRnnStates(OpKernelContext& ctx, const RnnAttributes& attrs, const RnnInputs& in,
                            const std::vector<const Tensor*>& states);

// Precomputes X * W[d]^T + Wb[d] for every time step, one row per row of X
// (in.XRow): [seq * batch, gates * hidden] in the calling thread's scratch
// (valid until its next call). Rb[d] is added too for the first
// `recurrent_bias_gates` gates (those whose recurrent bias is not applied
// separately).
template <typename T>
absl::StatusOr<const T*> InputProjection(const RnnInputs& in, int direction, int gates, int recurrent_bias_gates);

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
