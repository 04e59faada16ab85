// Attention (opset 23), as ONNX Runtime 1.30 computes it:
//   scores = scale * Q K^T                      (qk_matmul_output_mode 0)
//   scores = softcap * tanh(scores / softcap)   (when softcap > 0; mode 1)
//   scores += attn_mask + causal mask           (mode 2)
//   probs = softmax(scores)                     (mode 3; a row masked in full gives zeros)
//   Y = probs V
// K and V are appended to past_key / past_value (present_*), and the causal
// mask lets query i see keys j <= i + past_length. Query head h reads key/value
// head h / (q_heads / kv_heads) (grouped-query attention).
//
// Everything runs in float. The heads that share a key/value head are stacked
// into one matrix, so the two products are batched matmuls over batch x
// kv_heads; the scale, softcap, masks and softmax run fused in one pass over
// the score rows between them. Scores are kept for a slice of that batch at a
// time (kScoreBudget floats) so that long sequences do not hold every head's
// [S, T] matrix at once.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/llm/attention_shape.h"
#include "providers/cpu/llm/batched_matmul.h"
#include "providers/cpu/llm/llm_kernels.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"

namespace onyx {
namespace {

constexpr int64_t kScoreBudget = int64_t{16} << 20;

// Copies x, [B, L, H, Dh] when `seq_major` (a 3-D input split into heads) or
// else [B, H, L, Dh], into dst [B, H, total, Dh] at sequence position `at`.
void PlaceHeads(const float* x, bool seq_major, int64_t batch, int64_t heads, int64_t len, int64_t dh, float* dst,
                int64_t total, int64_t at) {
  ParallelFor(batch * heads * len, std::max<int64_t>(1, 4096 / std::max<int64_t>(dh, 1)),
              [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t l = i % len, bh = i / len, b = bh / heads, h = bh % heads;
      const float* src = x + (seq_major ? ((b * len + l) * heads + h) : (bh * len + l)) * dh;
      std::memcpy(dst + (bh * total + at + l) * dh, src, dh * sizeof(float));
    }
  });
}

// Writes `value` (float) into output i of `type`, converting when needed.
absl::Status StoreOutput(OpKernelContext& ctx, int i, const Tensor& value, DataType type) {
  ASSIGN_OR_RETURN(Tensor* out, ctx.Output(i, value.dims(), type));
  if (out->raw() == value.raw()) return absl::OkStatus();
  if (type == DataType::kFloat) {
    std::memcpy(out->mutable_raw(), value.raw(), value.byte_size());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(value, type));
  std::memcpy(out->mutable_raw(), converted.raw(), out->byte_size());
  return absl::OkStatus();
}

// Writes Y ([B, Hq, S, Dv] float) as output 0 of `type`: as is for 4-D
// inputs, as [B, S, Hq * Dv] for 3-D ones.
absl::Status StoreY(OpKernelContext& ctx, const AttentionShape& s, const Tensor& y, DataType type) {
  if (!s.three_d) return StoreOutput(ctx, 0, y, type);
  Tensor y3 = Tensor::Allocate(DataType::kFloat, {s.batch, s.q_seq, s.q_heads * s.v_head});
  const float* src = y.data<float>();
  float* dst = y3.mutable_data<float>();
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.q_heads; ++h) {
      for (int64_t i = 0; i < s.q_seq; ++i) {
        std::memcpy(dst + ((b * s.q_seq + i) * s.q_heads + h) * s.v_head,
                    src + ((b * s.q_heads + h) * s.q_seq + i) * s.v_head, s.v_head * sizeof(float));
      }
    }
  }
  return StoreOutput(ctx, 0, y3, type);
}

// The attention mask as float (bool: 0 where true, -inf where false), with its
// strides broadcast to [B, Hq, S, total].
struct MaskView {
  Tensor values;
  std::vector<int64_t> strides;  // 4 entries
};

absl::StatusOr<MaskView> ReadMask(const OpKernelContext& ctx, const Tensor& mask, const AttentionShape& s) {
  const Dims target = {s.batch, s.q_heads, s.q_seq, s.total};
  auto shape = BroadcastShape(mask.dims(), target);
  if (mask.rank() > 4 || !shape.ok() || *shape != target) {
    return ctx.Error(absl::StrCat("attn_mask ", DimsToString(mask.dims()), " does not broadcast to ",
                                  DimsToString(target), " (batch, q_heads, q_seq, past + kv_seq)"));
  }
  MaskView m;
  m.strides = BroadcastStrides(mask.dims(), target);
  if (mask.type() == DataType::kBool) {
    m.values = Tensor::Allocate(DataType::kFloat, mask.dims());
    const bool* in = mask.data<bool>();
    float* out = m.values.mutable_data<float>();
    for (int64_t i = 0; i < mask.num_elements(); ++i) out[i] = in[i] ? 0.f : -std::numeric_limits<float>::infinity();
  } else if (mask.type() == DataType::kFloat || mask.type() == DataType::kDouble || IsHalfLike(mask.type())) {
    ASSIGN_OR_RETURN(m.values, ConvertNumeric(mask, DataType::kFloat));
  } else {
    return ctx.Error(absl::StrCat("attn_mask must be bool or floating point, received ", DataTypeName(mask.type())));
  }
  return m;
}

class Attention final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    AttentionAttrs a;
    a.is_causal = info.AttrOr<int64_t>("is_causal", 0) != 0;
    a.q_num_heads = info.AttrOr<int64_t>("q_num_heads", 0);
    a.kv_num_heads = info.AttrOr<int64_t>("kv_num_heads", 0);
    a.has_scale = info.HasAttr("scale");
    a.scale = info.AttrOr<float>("scale", 0.f);
    a.softcap = info.AttrOr<float>("softcap", 0.f);
    a.qk_mode = info.AttrOr<int64_t>("qk_matmul_output_mode", 0);
    if (a.qk_mode < 0 || a.qk_mode > 3) {
      return info.Error(absl::StrCat("qk_matmul_output_mode must be 0..3, received ", a.qk_mode));
    }
    if (a.softcap < 0) return info.Error(absl::StrCat("softcap must be >= 0, received ", a.softcap));
    return std::unique_ptr<OpKernel>(new Attention(a));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(AttentionShape s, ReadAttentionShape(ctx, attrs_));
    const Tensor& q = *ctx.Input(0);
    const Tensor& k = *ctx.Input(1);
    const Tensor& v = *ctx.Input(2);
    std::optional<MaskView> mask;
    if (const Tensor* m = ctx.Input(3); m != nullptr) {
      ASSIGN_OR_RETURN(MaskView view, ReadMask(ctx, *m, s));
      mask = std::move(view);
    }
    // Q as [B, Hq, S, D]; present key and value as [B, Hk, total, D or Dv];
    // Y as [B, Hq, S, Dv]. Per-thread scratch: buffers this size, fresh on
    // every run, would pay their page faults every time.
    const Dims q_dims = {s.batch, s.q_heads, s.q_seq, s.head};
    const Dims k_dims = {s.batch, s.kv_heads, s.total, s.head};
    const Dims v_dims = {s.batch, s.kv_heads, s.total, s.v_head};
    const Dims y_dims = {s.batch, s.q_heads, s.q_seq, s.v_head};
    const int64_t q_n = NumElements(q_dims), k_n = NumElements(k_dims), v_n = NumElements(v_dims);
    float* operands = KernelScratch<float>(kScratchAttentionOperands, q_n + k_n + v_n + NumElements(y_dims));
    if (operands == nullptr) return absl::ResourceExhaustedError(ctx.node().Label() + ": no memory for operands");
    Tensor qf = Tensor::Wrap(DataType::kFloat, q_dims, operands);
    Tensor kf = Tensor::Wrap(DataType::kFloat, k_dims, operands + q_n);
    Tensor vf = Tensor::Wrap(DataType::kFloat, v_dims, operands + q_n + k_n);
    Tensor yf = Tensor::Wrap(DataType::kFloat, y_dims, operands + q_n + k_n + v_n);
    {
      ASSIGN_OR_RETURN(Tensor q32, ConvertNumeric(q, DataType::kFloat));
      ASSIGN_OR_RETURN(Tensor k32, ConvertNumeric(k, DataType::kFloat));
      ASSIGN_OR_RETURN(Tensor v32, ConvertNumeric(v, DataType::kFloat));
      PlaceHeads(q32.data<float>(), s.three_d, s.batch, s.q_heads, s.q_seq, s.head, qf.mutable_data<float>(), s.q_seq,
                 0);
      PlaceHeads(k32.data<float>(), s.three_d, s.batch, s.kv_heads, s.kv_seq, s.head, kf.mutable_data<float>(), s.total,
                 s.past);
      PlaceHeads(v32.data<float>(), s.three_d, s.batch, s.kv_heads, s.kv_seq, s.v_head, vf.mutable_data<float>(),
                 s.total, s.past);
      if (s.past > 0) {
        ASSIGN_OR_RETURN(Tensor pk, ConvertNumeric(*ctx.Input(4), DataType::kFloat));
        ASSIGN_OR_RETURN(Tensor pv, ConvertNumeric(*ctx.Input(5), DataType::kFloat));
        PlaceHeads(pk.data<float>(), false, s.batch, s.kv_heads, s.past, s.head, kf.mutable_data<float>(), s.total, 0);
        PlaceHeads(pv.data<float>(), false, s.batch, s.kv_heads, s.past, s.v_head, vf.mutable_data<float>(), s.total,
                   0);
      }
    }
    // qk_matmul_output is written in place when it is float.
    const bool want_qk = ctx.OutputCount() > 3 && ctx.OutputRequested(3);
    Tensor qk_out;
    if (want_qk) {
      const Dims qk_dims = {s.batch, s.q_heads, s.q_seq, s.total};
      if (q.type() == DataType::kFloat) {
        ASSIGN_OR_RETURN(Tensor * out, ctx.Output(3, qk_dims, DataType::kFloat));
        qk_out = *out;
      } else {
        qk_out = Tensor::Allocate(DataType::kFloat, qk_dims);
      }
    }
    RETURN_IF_ERROR(Run(s, qf.data<float>(), kf.data<float>(), vf.data<float>(), mask ? &*mask : nullptr,
                        want_qk ? qk_out.mutable_data<float>() : nullptr, yf.mutable_data<float>()));
    RETURN_IF_ERROR(StoreY(ctx, s, yf, q.type()));
    if (ctx.OutputCount() > 1 && ctx.OutputRequested(1)) RETURN_IF_ERROR(StoreOutput(ctx, 1, kf, k.type()));
    if (ctx.OutputCount() > 2 && ctx.OutputRequested(2)) RETURN_IF_ERROR(StoreOutput(ctx, 2, vf, v.type()));
    if (want_qk && q.type() != DataType::kFloat) RETURN_IF_ERROR(StoreOutput(ctx, 3, qk_out, q.type()));
    return absl::OkStatus();
  }

 private:
  explicit Attention(AttentionAttrs attrs) : attrs_(attrs) {}

  // The two batched products with the fused row pass between them, a slice
  // of the (batch, kv_head) groups at a time.
  absl::Status Run(const AttentionShape& s, const float* q, const float* k, const float* v, const MaskView* mask,
                   float* qk_out, float* y) const {
    const int64_t group = s.q_heads / s.kv_heads;  // query heads per kv head
    const int64_t rows = group * s.q_seq;          // score rows per (batch, kv_head)
    const int64_t groups = s.batch * s.kv_heads;
    const int64_t per_group = std::max<int64_t>(rows * s.total, 1);
    const int64_t chunk = std::clamp<int64_t>(kScoreBudget / per_group, 1, std::max<int64_t>(groups, 1));
    float* scores = KernelScratch<float>(kScratchAttentionScores, chunk * per_group);
    if (scores == nullptr) return absl::ResourceExhaustedError("no memory for the attention scores");
    const float scale = attrs_.has_scale ? attrs_.scale : 1.f / std::sqrt(static_cast<float>(s.head));
    for (int64_t g0 = 0; g0 < groups; g0 += chunk) {
      const int64_t n = std::min(chunk, groups - g0);
      RETURN_IF_ERROR(BatchedMatMul(n, rows, s.total, s.head, q + g0 * rows * s.head, {rows * s.head, s.head, 1},
                                    k + g0 * s.total * s.head, {s.total * s.head, 1, s.head}, scores));
      ParallelFor(n * rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(s.total, 1)),
                  [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          ScoreRow(s, scale, mask, g0 * rows + r, scores + r * s.total, qk_out);
        }
      });
      RETURN_IF_ERROR(BatchedMatMul(n, rows, s.v_head, s.total, scores, {rows * s.total, s.total, 1},
                                    v + g0 * s.total * s.v_head, {s.total * s.v_head, s.v_head, 1},
                                    y + g0 * rows * s.v_head));
    }
    return absl::OkStatus();
  }

  // Turns raw products into probabilities in place. `row` indexes the score
  // rows of every head in [B, Hq, S] order, as qk_matmul_output does.
  void ScoreRow(const AttentionShape& s, float scale, const MaskView* mask, int64_t row, float* x,
                float* qk_out) const {
    const int64_t i = row % s.q_seq, bh = row / s.q_seq, b = bh / s.q_heads, h = bh % s.q_heads;
    float* record = qk_out != nullptr ? qk_out + row * s.total : nullptr;
    const int64_t n = s.total;
    for (int64_t j = 0; j < n; ++j) x[j] *= scale;
    if (record && attrs_.qk_mode == 0) std::memcpy(record, x, n * sizeof(float));
    if (attrs_.softcap > 0) {
      const float cap = attrs_.softcap;
      for (int64_t j = 0; j < n; ++j) x[j] = cap * std::tanh(x[j] / cap);
    }
    if (record && attrs_.qk_mode == 1) std::memcpy(record, x, n * sizeof(float));
    if (mask != nullptr) {
      const auto& st = mask->strides;
      const float* m = mask->values.data<float>() + b * st[0] + h * st[1] + i * st[2];
      for (int64_t j = 0; j < n; ++j) x[j] += m[j * st[3]];
    }
    if (attrs_.is_causal) {
      for (int64_t j = i + s.past + 1; j < n; ++j) x[j] = -std::numeric_limits<float>::infinity();
    }
    if (record && attrs_.qk_mode == 2) std::memcpy(record, x, n * sizeof(float));
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) max = std::max(max, x[j]);
    if (max == -std::numeric_limits<float>::infinity()) {
      std::fill(x, x + n, 0.f);  // every key masked: no attention at all
    } else {
      float sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += (x[j] = std::exp(x[j] - max));
      const float inv = 1.f / sum;
      for (int64_t j = 0; j < n; ++j) x[j] *= inv;
    }
    if (record && attrs_.qk_mode == 3) std::memcpy(record, x, n * sizeof(float));
  }

  AttentionAttrs attrs_;
};

}  // namespace

void RegisterAttentionKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Attention").Since(23).Build(), MakeFactory<Attention>());
}

}  // namespace onyx
